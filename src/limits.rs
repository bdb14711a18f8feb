//! The limits of one run, their defaults — the one place they are written — and how sizes and
//! durations are read and written (`512MiB`, `1G`, `1048576`; `30s`, `0.5s`).

use std::time::Duration;

/// The limits a run gets when nothing sets them; `--help` and the environment help quote them.
pub(crate) const DEFAULT: Limits = Limits {
    timeout: Duration::from_secs(30),
    max_memory: 512 * 1024 * 1024,
    max_output: 20_000,
    max_tool_calls: 10_000,
    max_recursion: 1000,
    read_only: false,
};

/// The longest `--timeout` accepted, in seconds (one day).
pub(crate) const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Every limit a run is held to. All are on by default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limits {
    /// Wall-clock time for the whole run, interpreter and tool calls together.
    pub(crate) timeout: Duration,
    /// Bytes the program's heap may hold.
    pub(crate) max_memory: usize,
    /// Bytes of stdout kept; beyond it the head and the tail are kept.
    pub(crate) max_output: usize,
    /// Tool calls allowed in one run.
    pub(crate) max_tool_calls: u64,
    /// Python call depth before `RecursionError`.
    pub(crate) max_recursion: usize,
    /// Only what changes nothing may be called: the agent runs read-only (`--read-only`).
    pub(crate) read_only: bool,
}

impl Default for Limits {
    fn default() -> Self {
        DEFAULT
    }
}

/// Parses a size such as `512MiB`, `512M`, `1.5G`, `64k` or a plain byte count.
/// Units are binary (`M` and `MiB` both mean 2^20 bytes), case-insensitive.
pub(crate) fn parse_size(text: &str) -> Result<usize, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("`{text}` is not a size (examples: 512MiB, 1G, 1048576)"))?;
    let multiplier: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        other => return Err(format!("unknown size unit `{other}` in `{text}` (use K, M or G)")),
    };
    let bytes = (number * multiplier).round();
    if !(1.0..=9.0e15).contains(&bytes) {
        return Err(format!("size `{text}` is out of range"));
    }
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "range checked above")]
    Ok(bytes as usize)
}

/// Writes a byte count the way people read limits: `512 MiB`, `1.5 GiB`, `20000 bytes`.
#[must_use]
pub(crate) fn format_size(bytes: usize) -> String {
    const UNITS: [(&str, usize); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size {
            #[expect(clippy::cast_precision_loss, reason = "display only")]
            let value = bytes as f64 / size as f64;
            return if bytes.is_multiple_of(size) {
                format!("{} {unit}", bytes / size)
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// Writes a duration as seconds without noise: `30s`, `0.5s`.
#[must_use]
pub(crate) fn format_seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if duration.subsec_nanos() == 0 { format!("{}s", duration.as_secs()) } else { format!("{secs}s") }
}

/// How long a `run` call of `codeact mcp serve` waits for its program by default before it
/// answers with the output so far (`--yield-after`).
pub(crate) const YIELD_AFTER: Duration = Duration::from_secs(10);

/// Parses `--timeout` (seconds, fractions allowed).
pub(crate) fn parse_timeout_arg(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.trim().parse().map_err(|_| format!("`{text}` is not a number of seconds"))?;
    parse_timeout(seconds)
}

/// Turns a `--timeout` value into a duration, refusing zero, negatives and absurd values.
pub(crate) fn parse_timeout(seconds: f64) -> Result<Duration, String> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT_SECS) {
        return Err(format!("timeout must be between 0 and {MAX_TIMEOUT_SECS} seconds, got {seconds}"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_accept_binary_units_and_plain_bytes() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("1.5m"), Ok(3 << 19));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn sizes_print_in_the_largest_whole_unit() {
        assert_eq!(format_size(512 << 20), "512 MiB");
        assert_eq!(format_size(3 << 29), "1.5 GiB");
        assert_eq!(format_size(100), "100 bytes");
    }

    #[test]
    fn timeouts_must_be_positive_and_finite() {
        assert_eq!(parse_timeout(0.5), Ok(Duration::from_millis(500)));
        assert!(parse_timeout(0.0).is_err());
        assert!(parse_timeout(-1.0).is_err());
        assert!(parse_timeout(f64::NAN).is_err());
        assert_eq!(format_seconds(Duration::from_secs(30)), "30s");
        assert_eq!(format_seconds(Duration::from_millis(1500)), "1.5s");
    }
}
