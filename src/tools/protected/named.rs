//! The named rules: the paths no tool writes wherever they are in a workspace, by their
//! folded names, each with why; and how one folded name matches a rule's pattern.

/// A path no tool writes, and why.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rule {
    /// The rule as it is shown.
    pub(super) shown: &'static str,
    /// The names it matches, folded, in a row anywhere in a path; a `*` in one stands for any
    /// run of characters.
    pub(super) names: &'static [&'static str],
    pub(super) why: &'static str,
}

const HOOK_MANAGER: &str = "git runs the commands it names on commit";

/// Every named rule. A path is protected when its names contain a rule's names in a row.
pub(super) const RULES: &[Rule] = &[
    Rule { shown: ".git/**", names: &[".git"], why: "git runs the commands its config and hooks name" },
    Rule { shown: ".codeact/**", names: &[".codeact"], why: "codeact loads its config and tools from there" },
    Rule { shown: ".mcp.json", names: &[".mcp.json"], why: "it starts MCP servers" },
    Rule { shown: ".vscode/**", names: &[".vscode"], why: "VS Code runs the tasks and MCP servers set there" },
    Rule {
        shown: ".github/copilot/**",
        names: &[".github", "copilot"],
        why: "Copilot loads MCP servers and settings from there",
    },
    Rule { shown: ".github/hooks/**", names: &[".github", "hooks"], why: "Copilot runs the hooks there" },
    Rule {
        shown: ".github/instructions/**",
        names: &[".github", "instructions"],
        why: "Copilot reads them as instructions in every session",
    },
    Rule { shown: ".github/agents/**", names: &[".github", "agents"], why: "Copilot loads them as agents" },
    Rule { shown: ".github/prompts/**", names: &[".github", "prompts"], why: "Copilot offers them as prompts" },
    Rule {
        shown: ".github/copilot-instructions.md",
        names: &[".github", "copilot-instructions.md"],
        why: "Copilot reads it as instructions in every session",
    },
    Rule { shown: "AGENTS.md", names: &["agents.md"], why: "coding agents read it as instructions" },
    Rule { shown: "AGENTS.override.md", names: &["agents.override.md"], why: "Codex reads it as instructions" },
    Rule {
        shown: ".github/chatmodes/**",
        names: &[".github", "chatmodes"],
        why: "VS Code's Copilot loads them as chat modes",
    },
    Rule { shown: "CLAUDE.md", names: &["claude.md"], why: "Claude Code reads it as instructions" },
    Rule { shown: ".claude/**", names: &[".claude"], why: "Claude Code runs the hooks and loads the settings there" },
    Rule { shown: ".envrc", names: &[".envrc"], why: "direnv runs it in the shell" },
    Rule { shown: ".husky/**", names: &[".husky"], why: "git runs the hooks there on commit" },
    Rule {
        shown: ".pre-commit-config.yaml",
        names: &[".pre-commit-config.yaml"],
        why: "pre-commit runs the commands it names on commit",
    },
    Rule {
        shown: ".pre-commit-config.yml",
        names: &[".pre-commit-config.yml"],
        why: "pre-commit runs the commands it names on commit",
    },
    Rule { shown: "lefthook.*", names: &["lefthook.*"], why: HOOK_MANAGER },
    Rule { shown: ".lefthook.*", names: &[".lefthook.*"], why: HOOK_MANAGER },
    Rule { shown: "lefthook-local.*", names: &["lefthook-local.*"], why: HOOK_MANAGER },
    Rule { shown: ".lefthook-local.*", names: &[".lefthook-local.*"], why: HOOK_MANAGER },
    Rule { shown: ".lefthook/**", names: &[".lefthook"], why: "lefthook runs the scripts there on commit" },
    Rule { shown: ".lefthook-local/**", names: &[".lefthook-local"], why: "lefthook runs the scripts there on commit" },
    Rule {
        shown: ".lintstagedrc*",
        names: &[".lintstagedrc*"],
        why: "lint-staged runs the commands it names on commit",
    },
    Rule {
        shown: "lint-staged.config.*",
        names: &["lint-staged.config.*"],
        why: "lint-staged runs the commands it names on commit",
    },
    Rule {
        shown: ".overcommit.yml",
        names: &[".overcommit.*"],
        why: "overcommit runs the commands it names on commit",
    },
    Rule { shown: "CLAUDE.local.md", names: &["claude.local.md"], why: "Claude Code reads it as instructions" },
    Rule { shown: "GEMINI.md", names: &["gemini.md"], why: "Gemini CLI and Copilot read it as instructions" },
    Rule { shown: ".gemini/**", names: &[".gemini"], why: "Gemini CLI runs the hooks and MCP servers set there" },
    Rule { shown: ".codex/**", names: &[".codex"], why: "Codex CLI starts the MCP servers set there" },
    Rule { shown: ".qwen/**", names: &[".qwen"], why: "Qwen Code runs the hooks and MCP servers set there" },
    Rule { shown: "QWEN.md", names: &["qwen.md"], why: "Qwen Code reads it as instructions" },
    Rule { shown: "opencode.json", names: &["opencode.json"], why: "OpenCode starts the MCP servers set there" },
    Rule { shown: "opencode.jsonc", names: &["opencode.jsonc"], why: "OpenCode starts the MCP servers set there" },
    Rule { shown: ".opencode/**", names: &[".opencode"], why: "OpenCode loads the plugins, agents and commands there" },
    Rule {
        shown: ".cursor/**",
        names: &[".cursor"],
        why: "Cursor starts the MCP servers set there and reads the rules",
    },
    Rule { shown: ".cursorrules", names: &[".cursorrules"], why: "Cursor reads it as instructions" },
    Rule { shown: ".github/skills/**", names: &[".github", "skills"], why: "Copilot loads them as skills" },
    Rule {
        shown: "*.code-workspace",
        names: &["*.code-workspace"],
        why: "VS Code runs the tasks and MCP servers set there",
    },
    Rule {
        shown: ".devcontainer/**",
        names: &[".devcontainer"],
        why: "a dev container's `initializeCommand` runs on the host",
    },
    Rule {
        shown: ".devcontainer.json",
        names: &[".devcontainer.json"],
        why: "a dev container's `initializeCommand` runs on the host",
    },
    Rule { shown: ".direnv/**", names: &[".direnv"], why: "direnv keeps the environments it activates there" },
    Rule {
        shown: ".venv/**",
        names: &[".venv"],
        why: "uv, Poetry and others make the project's Python environment there",
    },
    Rule { shown: "pyvenv.cfg", names: &["pyvenv.cfg"], why: "it names the interpreter a Python environment runs" },
    Rule { shown: "conda-meta/**", names: &["conda-meta"], why: "it makes its folder a conda environment" },
];

/// Why a folder holding a Python environment is protected.
pub(super) const PYTHON_ENV: &str = "Python runs the `.pth` files and imports the modules there when it starts from it";

/// Whether a folded `name` matches a rule's `pattern`, in which one `*` stands for any run.
pub(super) fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        Some((head, tail)) => name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail),
        None => pattern == name,
    }
}
