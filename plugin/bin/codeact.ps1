# codeact launcher for the Copilot CLI and Claude Code plugins on Windows, the twin of the `sh`
# launcher beside it (bin/codeact): finds the codeact binary and runs it, never through another
# interpreter (the hooks run before every tool call). It takes the first of:
#   1. $env:CODEACT_BIN, an absolute path;
#   2. a binary next to this script, codeact-windows-<arch>.exe;
#   3. codeact.exe in an absolute PATH entry (a relative one names a folder of the project): the
#      binary itself (pip, uv, cargo), or, where the entry holds npm's launcher (codeact.cmd,
#      codeact.ps1), the binary in npm's platform package beside it;
#   4. ~\.local\bin\codeact.exe (pip --user, uv tool, pipx), then ~\.cargo\bin\codeact.exe (cargo).
# Without one, hooks let every call through, the session-start hook says once how to install
# codeact, and other commands say it on stderr.
#
# Only PowerShell's own cmdlets and .NET run here, in Windows PowerShell 5.1 and PowerShell 7
# alike: no program is started before the binary.

# The PATH entries searched, for codeact and for the programs the install hint names: absolute
# ones only, and none of the project's: neither the current directory's nor the one the host
# names as its project (a hook may run in a subdirectory of it). A relative entry is read in the
# project, and so are the absolute `node_modules\.bin` folders npm puts first when it starts the
# agent (`npx`, `npm exec`); a device path (`\\?\`, `\\.\`) may name anything, and an entry
# with `.` or `..` in it may lead anywhere. The binary gets the user's PATH as it is.

# The separator of this system's paths: `\` on Windows, `/` where PowerShell 7 runs elsewhere.
$separator = [System.IO.Path]::DirectorySeparatorChar

# A path as this system spells it whole (on Windows `C:\...` or a share, `\\server\share\...`, never
# a device path, `\\?\` or `\\.\`), with no `.` or `..` part, no quote and no `%` (cmd's
# unexpanded variables), without a trailing separator; `$null` for anything else.
function Get-PlainPath([string] $Path) {
    $whole = if ($separator -eq '\') { '^([A-Za-z]:[\\/]|\\\\[^\\/?.])' } else { '^/' }
    if ($Path -notmatch $whole -or $Path -match '["%]') {
        return $null
    }
    foreach ($part in $Path -split '[\\/]') {
        if ($part -eq '.' -or $part -eq '..') {
            return $null
        }
    }
    return $Path.TrimEnd('\', '/')
}

# The folder `$Path` leads to, the links (symbolic links, junctions) on its way followed.
function Get-RealPath([string] $Path) {
    $full = [System.IO.Path]::GetFullPath($Path).TrimEnd('\', '/')
    for ($hops = 0; $hops -lt 40; $hops++) {
        $link = $null
        $up = $full
        while ($up) {
            # Most folders are no link: asked of .NET first, which is quick.
            try { $attributes = [System.IO.File]::GetAttributes($up) } catch { $attributes = 0 }
            if ($attributes -band [System.IO.FileAttributes]::ReparsePoint) {
                $item = Get-Item -LiteralPath $up -Force -ErrorAction SilentlyContinue
                if ($item -and $item.Target) {
                    $link = $up
                    break
                }
            }
            $up = [System.IO.Path]::GetDirectoryName($up)
        }
        if (-not $link) {
            return $full
        }
        # A relative target is taken from the link's folder.
        $target = [System.IO.Path]::Combine([System.IO.Path]::GetDirectoryName($link), @($item.Target)[0])
        $full = [System.IO.Path]::GetFullPath($target + $full.Substring($link.Length)).TrimEnd('\', '/')
    }
    return $full
}

# Whether `$Inner` is `$Outer` or lies below it, compared without case as Windows compares paths.
function Test-Within([string] $Inner, [string] $Outer) {
    $Inner -eq $Outer -or $Inner.StartsWith($Outer + $separator, [System.StringComparison]::OrdinalIgnoreCase)
}

$here = (Get-Location -PSProvider FileSystem -ErrorAction SilentlyContinue).ProviderPath
# The repository around the project is the project too: around the host's project directory, or
# the current directory when the host names none (Copilot CLI runs hooks in the plugin's folder,
# Claude Code in the project).
$repository = $null
$up = $env:COPILOT_PROJECT_DIR
if (-not $up) { $up = $env:CLAUDE_PROJECT_DIR }
if (-not $up) { $up = $here }
$up = Get-PlainPath $up
while ($up -and [System.IO.Path]::GetDirectoryName($up)) {
    if (Test-Path -LiteralPath (Join-Path $up '.git')) {
        $repository = $up
        break
    }
    $up = [System.IO.Path]::GetDirectoryName($up)
}

# The project's folders, each as written and where it leads: neither a drive's root nor the
# home folder, which would hold every entry.
$homeFolder = Get-PlainPath $HOME
$projects = @()
foreach ($project in @($here, $env:COPILOT_PROJECT_DIR, $env:CLAUDE_PROJECT_DIR, $repository)) {
    $plain = Get-PlainPath $project
    if (-not $plain -or -not [System.IO.Path]::GetDirectoryName($plain) -or $plain -eq $homeFolder) {
        continue
    }
    $projects += $plain
    $projects += Get-RealPath $plain
}

# Whether the folder `$Dir` is one of the project's, as written or where it leads.
function Test-InProject([string] $Dir) {
    $real = Get-RealPath $Dir
    foreach ($project in $projects) {
        if ((Test-Within $Dir $project) -or (Test-Within $real $project)) {
            return $true
        }
    }
    return $false
}

$safePath = @()
foreach ($entry in "$env:PATH".Split([System.IO.Path]::PathSeparator)) {
    $dir = Get-PlainPath $entry
    if (-not $dir -or $dir -match '[\\/]node_modules[\\/]\.bin$') {
        continue
    }
    if (Test-InProject $dir) {
        continue
    }
    $safePath += $dir
}

# A launcher run without a file of its own (`-Command`, a script block) has no folder to look in.
# Only `.exe` files are run, never a launcher found on PATH: no copy of this one runs another.
$selfDir = $PSScriptRoot

function Test-Runnable([string] $Path) {
    $Path -and (Test-Path -LiteralPath $Path -PathType Leaf)
}

# The binary that runs, or `$null`.
function Find-Codeact {
    # Only absolute paths: a relative one would be read in the project.
    if ((Get-PlainPath $env:CODEACT_BIN) -and (Test-Runnable $env:CODEACT_BIN)) {
        return $env:CODEACT_BIN
    }
    # This machine's architecture as Rust and the binaries' names spell it, and as npm does;
    # a 32-bit PowerShell on a 64-bit Windows learns the machine's from PROCESSOR_ARCHITEW6432.
    $machine = $env:PROCESSOR_ARCHITEW6432
    if (-not $machine) { $machine = $env:PROCESSOR_ARCHITECTURE }
    $arch, $npmArch = switch ($machine) {
        'AMD64' { 'x86_64', 'x64' }
        'ARM64' { 'aarch64', 'arm64' }
        default { 'unknown', 'unknown' }
    }
    if ($selfDir) {
        $beside = Join-Path $selfDir "codeact-windows-$arch.exe"
        if (Test-Runnable $beside) {
            return $beside
        }
    }
    foreach ($dir in $safePath) {
        $candidate = Join-Path $dir 'codeact.exe'
        if (Test-Runnable $candidate) {
            return $candidate
        }
        # npm puts its launchers (`codeact.cmd`, `codeact.ps1`, which start Node) in its prefix
        # folder, and the package in `node_modules` there; the binary is in the platform package
        # npm installed with it, nested or beside it.
        if ((Test-Runnable (Join-Path $dir 'codeact.cmd')) -or (Test-Runnable (Join-Path $dir 'codeact.ps1'))) {
            $package = Join-Path $dir 'node_modules\codeact'
            foreach ($found in @(
                    (Join-Path $package "node_modules\@codeact\win32-$npmArch\bin\codeact.exe"),
                    (Join-Path $dir "node_modules\@codeact\win32-$npmArch\bin\codeact.exe"))) {
                if (Test-Runnable $found) {
                    return $found
                }
            }
        }
    }
    if ($homeFolder) {
        foreach ($candidate in @((Join-Path $homeFolder '.local\bin\codeact.exe'), (Join-Path $homeFolder '.cargo\bin\codeact.exe'))) {
            if (Test-Runnable $candidate) {
                return $candidate
            }
        }
    }
    return $null
}

$bin = Find-Codeact
if ($bin) {
    # The binary learns this script's path, so that the commands it writes for the model name
    # the launcher, which keeps finding the binary after an upgrade.
    if ($selfDir) {
        $env:CODEACT_LAUNCHER = Join-Path $selfDir 'codeact.ps1'
    }
    # A here-string piped into this script goes on to the binary; otherwise the binary reads this
    # process's own stdin (a hook's payload), byte for byte.
    if ($MyInvocation.ExpectingInput) {
        $input | & $bin @args
    } else {
        & $bin @args
    }
    exit $LASTEXITCODE
}

# The one command that installs codeact here, by what this machine has.
function Test-OnPath([string] $Name) {
    foreach ($dir in $safePath) {
        foreach ($extension in @('.exe', '.cmd')) {
            if (Test-Runnable (Join-Path $dir "$Name$extension")) {
                return $true
            }
        }
    }
    return $false
}
$install = if (Test-OnPath 'uv') {
    'uv tool install codeact'
} elseif (Test-OnPath 'npm') {
    'npm install -g codeact'
} else {
    'pip install codeact'
}

if ($args.Count -ge 1 -and $args[0] -eq 'hook') {
    if ($args.Count -ge 2 -and $args[1] -eq 'session-start') {
        [Console]::Out.WriteLine("{""additionalContext"":""codeact is not installed on this machine, so its tools are unavailable in this session. It installs with ``$install``.""}")
    }
    exit 0
}
[Console]::Error.WriteLine("codeact: the codeact binary was not found; install it with ``$install`` (or set CODEACT_BIN to its path)")
exit 127
