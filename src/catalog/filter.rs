//! The allow and deny lists: which tools configuration lets the catalogue offer.

/// Which tools are offered: an optional allow-list, then a deny-list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ToolFilter {
    pub(crate) allow: Option<Vec<String>>,
    pub(crate) deny: Vec<String>,
}

impl ToolFilter {
    /// Whether the tool `name` may be offered.
    #[must_use]
    pub(crate) fn allows(&self, name: &str) -> bool {
        let allowed = self.allow.as_ref().is_none_or(|allow| allow.iter().any(|n| n == name));
        allowed && !self.deny.iter().any(|n| n == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_list_beats_allow_list() {
        let filter = ToolFilter { allow: Some(vec!["view".into(), "bash".into()]), deny: vec!["bash".into()] };
        assert!(filter.allows("view"));
        assert!(!filter.allows("bash"));
        assert!(!filter.allows("grep"));
    }
}
