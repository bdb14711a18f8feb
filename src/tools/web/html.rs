//! HTML to readable text for `web_fetch`, within the run's time limit.
//!
//! `html2text` (over html5ever) gives the best text, but its time grows with the nesting depth
//! times the number of tags, and a page made of nothing but open tags takes minutes. So the
//! page is cut to [`MAX_HTML`] bytes; one that nests deeper than [`MAX_DEPTH`] is turned into
//! text by a plain, linear tag stripper instead; and the conversion runs on a worker thread that
//! is given up on at the deadline (it ends with the process, which the time limit ends soon).

use std::sync::mpsc;
use std::time::Instant;

use crate::tools::context::timed_out;
use crate::tools::error::ToolError;

/// Bytes of HTML converted at most (scripts, styles and comments left out); the rest of the
/// page is left out, with a note.
pub(super) const MAX_HTML: usize = 2 * 1024 * 1024;

/// Deepest nesting handed to `html2text`.
const MAX_DEPTH: usize = 512;

/// Characters per line in the converted text.
const WIDTH: usize = 100;

/// Stack for the converter, which recurses over the document.
const STACK: usize = 64 * 1024 * 1024;

/// Elements that never hold content, and those whose end tag is optional because the next one
/// closes them: neither makes a page any deeper.
const FLAT: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr",
    "keygen", "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "thead", "tbody", "tfoot", "colgroup",
    "rb", "rt", "rtc", "rp",
];

/// The page as text, or `TimeoutError` once `deadline` passes.
pub(super) fn to_text(html: &[u8], deadline: Instant) -> Result<String, ToolError> {
    let mut html = drop_inert(html);
    let cut = html.len() > MAX_HTML;
    html.truncate(MAX_HTML);
    let mut text = if depth(&html) > MAX_DEPTH { strip(&html) } else { convert(html, deadline)? };
    if cut {
        text.push_str("\n[… the rest of the page is not shown: only its first ");
        text.push_str(&MAX_HTML.to_string());
        text.push_str(" bytes of HTML are converted …]");
    }
    Ok(text)
}

/// `html2text` on a worker thread, waited for until `deadline`.
fn convert(html: Vec<u8>, deadline: Instant) -> Result<String, ToolError> {
    let (send, receive) = mpsc::channel();
    let worker = std::thread::Builder::new().name("web_fetch-html".into()).stack_size(STACK).spawn(move || {
        let text = html2text::from_read(&html[..], WIDTH).unwrap_or_else(|_| strip(&html));
        let _ = send.send(text);
    });
    if worker.is_err() {
        return Err(ToolError::runtime("web_fetch() could not start converting the page to text"));
    }
    let wait = deadline.saturating_duration_since(Instant::now());
    receive.recv_timeout(wait).map_err(|err| match err {
        mpsc::RecvTimeoutError::Timeout => timed_out("web_fetch"),
        mpsc::RecvTimeoutError::Disconnected => ToolError::runtime("web_fetch() failed converting the page to text"),
    })
}

/// The page without its scripts, styles and comments, which hold no text to show.
fn drop_inert(html: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(html.len());
    let mut at = 0;
    while let Some(offset) = html[at..].iter().position(|byte| *byte == b'<') {
        let start = at + offset;
        let rest = &html[start..];
        let close: Option<Vec<u8>> = if rest.starts_with(b"<!--") {
            Some(b"-->".to_vec())
        } else {
            [&b"script"[..], b"style"].into_iter().find(|name| opens(rest, name)).map(|name| [b"</", name].concat())
        };
        let Some(close) = close else {
            out.extend_from_slice(&html[at..=start]);
            at = start + 1;
            continue;
        };
        out.extend_from_slice(&html[at..start]);
        // Never closed: the rest of the page is script, style or comment, as a browser reads it.
        let Some(found) = find(rest, &close) else { return out };
        let after = found + close.len();
        at = start + rest[after - 1..].iter().position(|b| *b == b'>').map_or(rest.len(), |gt| after + gt);
    }
    out.extend_from_slice(&html[at..]);
    out
}

/// Whether `tag` (starting at `<`) opens the element `name`.
fn opens(tag: &[u8], name: &[u8]) -> bool {
    tag.len() > name.len() + 1
        && tag[1..=name.len()].eq_ignore_ascii_case(name)
        && matches!(tag[name.len() + 1], b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// Where `needle` (lowercase) first occurs in `haystack`, ignoring ASCII case.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window.eq_ignore_ascii_case(needle))
}

/// How deep the page's elements nest, counted roughly (and never below the truth by much):
/// each start tag of an element that holds content opens a level, each end tag closes one.
fn depth(html: &[u8]) -> usize {
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    while let Some(offset) = html[at..].iter().position(|byte| *byte == b'<') {
        at += offset + 1;
        match html.get(at) {
            Some(b'/') => depth = depth.saturating_sub(1),
            Some(byte) if byte.is_ascii_alphabetic() => {
                let name_end =
                    html[at..].iter().position(|b| !b.is_ascii_alphanumeric()).map_or(html.len(), |n| at + n);
                let name = String::from_utf8_lossy(&html[at..name_end]).to_ascii_lowercase();
                let tag_end = html[name_end..].iter().position(|b| *b == b'>').map_or(html.len(), |n| name_end + n);
                let self_closing = tag_end > 0 && html.get(tag_end - 1) == Some(&b'/');
                if !self_closing && !FLAT.contains(&name.as_str()) {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
            }
            _ => {}
        }
    }
    deepest
}

/// Text without tags, in one pass: scripts, styles and comments dropped, block-level tags as
/// line breaks, the common entities decoded, runs of blank space folded.
fn strip(html: &[u8]) -> String {
    let page = String::from_utf8_lossy(html);
    let lower = page.to_ascii_lowercase();
    let mut text = String::with_capacity(page.len() / 2);
    let mut at = 0;
    while at < page.len() {
        let Some(offset) = page[at..].find('<') else {
            text.push_str(&page[at..]);
            break;
        };
        text.push_str(&page[at..at + offset]);
        at += offset;
        let rest = &lower[at..];
        let skip_to = if rest.starts_with("<!--") {
            rest.find("-->").map(|end| end + 3)
        } else if rest.starts_with("<script") {
            rest.find("</script").and_then(|end| rest[end..].find('>').map(|close| end + close + 1))
        } else if rest.starts_with("<style") {
            rest.find("</style").and_then(|end| rest[end..].find('>').map(|close| end + close + 1))
        } else {
            rest.find('>').map(|end| end + 1)
        };
        let Some(skip) = skip_to else { break };
        if is_block(rest) {
            text.push('\n');
        } else {
            text.push(' ');
        }
        at += skip;
    }
    fold_space(&decode_entities(&text))
}

fn is_block(tag: &str) -> bool {
    let name: String = tag.trim_start_matches(['<', '/']).chars().take_while(char::is_ascii_alphanumeric).collect();
    matches!(
        name.as_str(),
        "p" | "div"
            | "br"
            | "li"
            | "tr"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "ul"
            | "ol"
            | "table"
            | "pre"
            | "blockquote"
            | "section"
            | "article"
            | "header"
            | "footer"
            | "hr"
            | "dt"
            | "dd"
    )
}

fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('&') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        // `;` is ASCII, so where it is found is a character boundary.
        let end = rest.bytes().take(12).position(|byte| byte == b';');
        let decoded = end.and_then(|end| {
            let name = &rest[1..end];
            let ch = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some(' '),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .map(|hex| u32::from_str_radix(hex, 16))
                    .or_else(|| name.strip_prefix('#').map(str::parse::<u32>))
                    .and_then(Result::ok)
                    .and_then(char::from_u32),
            };
            ch.map(|ch| (ch, end + 1))
        });
        if let Some((ch, used)) = decoded {
            out.push(ch);
            rest = &rest[used..];
        } else {
            out.push('&');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Spaces and tabs folded to one, lines trimmed, at most one blank line in a row and none at
/// either end.
fn fold_space(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            blank += 1;
            if blank > 1 || out.is_empty() {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(&line);
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_nesting_but_not_void_or_self_closing_elements() {
        assert_eq!(depth(b"<html><body><div><p>a<p>b</div></body></html>"), 3);
        assert_eq!(depth(b"<br><img src=x><hr/><x-y/>"), 0);
        assert_eq!(depth("<div>".repeat(1000).as_bytes()), 1000);
    }

    #[test]
    fn the_stripper_keeps_text_and_drops_scripts_styles_and_comments() {
        let html = b"<html><head><style>p{}</style><script>var x = '<b>';</script></head>\
                     <body><h1>Title</h1><!-- note --><p>a &amp; b&#33; &lt;c&gt;</p><div>d</div></body></html>";
        assert_eq!(strip(html), "Title\n\na & b! <c>\n\nd\n");
        assert_eq!(strip("<p>é&é&amp;ü &#x263a; &bogus;</p>".as_bytes()), "é&é&ü ☺ &bogus;\n");
    }

    #[test]
    fn scripts_styles_and_comments_are_dropped_before_converting() {
        let html = b"<p>a<SCRIPT type=x>if (a<b) {}</script >b<style>p{}</style><!-- c -->d<scripts>e</scripts>";
        assert_eq!(drop_inert(html), b"<p>abd<scripts>e</scripts>");
        assert_eq!(drop_inert(b"<p>a<script>never closed"), b"<p>a");
        assert_eq!(drop_inert(b"a<!-- x -->b<!--- y --->c"), b"abc");
    }

    #[test]
    fn deep_pages_are_stripped_in_linear_time() {
        let html = format!("{}x", "<div>".repeat(200_000)).into_bytes();
        let started = Instant::now();
        let text = to_text(&html, Instant::now() + std::time::Duration::from_mins(1)).unwrap();
        assert_eq!(text, "x\n");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
