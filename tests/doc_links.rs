//! Every relative link in the repository's Markdown files points at
//! something that exists.
//!
//! The test takes every Markdown file of the repository (`git ls-files`:
//! the tracked ones and the new ones git does not ignore; without git, a
//! walk of the tree that skips build output, VCS data and fuzz corpora),
//! finds each inline link and image (`[text](path)`, `[text](path#anchor)`,
//! `![alt](path)`) and each reference definition (`[name]: path`) outside
//! fenced code blocks and inline code, and checks that
//!
//! * the path (relative to the file, or to the repository root when it
//!   starts with `/`) names a file or directory of the working tree;
//! * an anchor into a Markdown file (`file.md#anchor`, or `#anchor` for the
//!   same file) is one of that file's headings, slugged as GitHub slugs
//!   them (lowercase, spaces to `-`, punctuation other than `-` and `_`
//!   dropped, `-1`, `-2`... for repeated headings), or an explicit
//!   `<a name="...">`/`id="..."` anchor.
//!
//! Links with a scheme (`https:`, `mailto:`, ...) are not checked. It fails
//! listing every broken link as `file:line -> target (why)`. Only std is
//! used, so it builds without the rest of the package's test support.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Directories a tree walk never enters (build output, VCS data, fuzzing
/// corpora and artifacts, vendored packages).
const SKIPPED_DIRS: &[&str] = &[
    "target",
    ".git",
    "node_modules",
    "corpus",
    "artifacts",
    "coverage",
    "vendor",
    ".cargo",
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown files to check, relative to `root`, sorted.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            "*.md",
        ])
        .current_dir(root)
        .output();
    let mut files: Vec<PathBuf> = match listed {
        Ok(out) if out.status.success() => out
            .stdout
            .split(|&b| b == 0)
            .filter(|name| !name.is_empty())
            .map(|name| PathBuf::from(String::from_utf8_lossy(name).into_owned()))
            // A file deleted in the working tree (moved by a change not yet
            // committed) is not there to check; nor are packages another
            // tool put in the tree without ignoring them.
            .filter(|path| root.join(path).is_file() && !in_skipped_dir(path))
            .collect(),
        _ => {
            let mut found = Vec::new();
            walk(root, root, &mut found);
            found
        }
    };
    files.sort();
    files.dedup();
    files
}

/// Whether `path` lies under one of [`SKIPPED_DIRS`].
fn in_skipped_dir(path: &Path) -> bool {
    path.parent().is_some_and(|dir| {
        dir.components()
            .any(|c| SKIPPED_DIRS.iter().any(|skip| c.as_os_str() == *skip))
    })
}

fn walk(root: &Path, dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_ref()) {
                walk(root, &path, found);
            }
        } else if kind.is_file() && name.ends_with(".md") {
            if let Ok(relative) = path.strip_prefix(root) {
                found.push(relative.to_path_buf());
            }
        }
    }
}

/// A link found in a file: its 1-based line and its target as written.
#[derive(Debug, PartialEq, Eq)]
struct Link {
    line: usize,
    target: String,
}

/// An open fenced code block: its fence character and length.
struct Fence {
    ch: char,
    len: usize,
}

/// The fence a line opens or closes (up to three spaces of indent, then at
/// least three backticks or tildes), with what follows it.
fn fence_of(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next()?;
    if ch != '`' && ch != '~' {
        return None;
    }
    let len = rest.len() - rest.trim_start_matches(ch).len();
    if len < 3 {
        return None;
    }
    Some((ch, len, &rest[len..]))
}

/// The lines of `text` that are not inside fenced code blocks, with their
/// 1-based numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut open: Option<Fence> = None;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        match (&open, fence_of(line)) {
            (None, Some((ch, len, info))) => {
                // A backtick fence's info string has no backtick.
                if ch == '~' || !info.contains('`') {
                    open = Some(Fence { ch, len });
                    continue;
                }
                lines.push((index + 1, line));
            }
            (Some(fence), Some((ch, len, info)))
                if ch == fence.ch && len >= fence.len && info.trim().is_empty() =>
            {
                open = None;
            }
            (Some(_), _) => {}
            (None, None) => lines.push((index + 1, line)),
        }
    }
    lines
}

/// `line` with its inline code spans blanked out (a code span is a run of
/// N backticks up to the next run of exactly N; an unmatched run is
/// literal).
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&c| c == '`').count();
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let other = chars[j..].iter().take_while(|&&c| c == '`').count();
                if other == run {
                    close = Some(j);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                out.extend(std::iter::repeat_n(' ', end + run - i));
                i = end + run;
            }
            None => {
                out.extend(std::iter::repeat_n('`', run));
                i += run;
            }
        }
    }
    out
}

/// The targets of the inline links and images on one line (code spans
/// already blanked), as written (angle brackets and titles removed).
fn inline_targets(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut targets = Vec::new();
    let mut i = 0;
    while i + 1 < chars.len() {
        if chars[i] == ']' && chars[i + 1] == '(' && (i == 0 || chars[i - 1] != '\\') {
            // The destination runs to the `)` that balances the `(`.
            let start = i + 2;
            let mut depth = 1;
            let mut j = start;
            let mut angle = false;
            while j < chars.len() {
                match chars[j] {
                    '<' if j == start => angle = true,
                    '>' if angle => angle = false,
                    '\\' => j += 1,
                    '(' if !angle => depth += 1,
                    ')' if !angle => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if j < chars.len() {
                let inside: String = chars[start..j].iter().collect();
                if let Some(target) = destination(&inside) {
                    targets.push(target);
                }
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    targets
}

/// A link destination without its title: `<a b.md>` or `a.md "title"`.
fn destination(inside: &str) -> Option<String> {
    let inside = inside.trim();
    if let Some(rest) = inside.strip_prefix('<') {
        return rest.split_once('>').map(|(target, _)| target.to_owned());
    }
    let target = inside.split_whitespace().next()?;
    Some(target.to_owned())
}

/// The target of a reference definition (`[name]: target`), if `line` is
/// one.
fn definition_target(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let rest = trimmed.strip_prefix('[')?;
    let (label, rest) = rest.split_once("]:")?;
    if label.is_empty() || label.starts_with('^') {
        return None;
    }
    destination(rest)
}

/// Every checkable link of a Markdown text.
fn links(text: &str) -> Vec<Link> {
    let mut found = Vec::new();
    for (line, raw) in prose_lines(text) {
        let plain = without_code_spans(raw);
        for target in inline_targets(&plain)
            .into_iter()
            .chain(definition_target(&plain))
        {
            found.push(Link { line, target });
        }
    }
    found
}

/// Whether a target is for another program (a URL scheme such as `https:`
/// or `mailto:`), not a path in the repository.
fn has_scheme(target: &str) -> bool {
    match target.split_once(':') {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && !scheme.contains('/')
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => target.starts_with("//"),
    }
}

/// `%XX` escapes decoded (a path with a space is written `a%20b.md`).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(value) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(value);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// GitHub's anchor for a heading's text: inline markup reduced to its text,
/// lowercased, letters, digits, `-` and `_` kept, spaces turned into `-`,
/// everything else dropped.
fn slug(heading: &str) -> String {
    let text = heading_text(heading);
    let mut slug = String::with_capacity(text.len());
    for c in text.trim().chars() {
        if c.is_alphanumeric() {
            slug.extend(c.to_lowercase());
        } else if c == ' ' {
            slug.push('-');
        } else if c == '-' || c == '_' {
            slug.push(c);
        }
    }
    slug
}

/// The text a heading renders to: links and images become their text,
/// code spans their content, emphasis marks (`*`) go.
fn heading_text(heading: &str) -> String {
    let chars: Vec<char> = heading.chars().collect();
    let mut out = String::with_capacity(heading.len());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            // `[text](target)`: keep the text, drop the target.
            ']' if chars.get(i + 1) == Some(&'(') => {
                let mut depth = 0;
                let mut j = i + 1;
                while j < chars.len() {
                    match chars[j] {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                i = j + 1;
            }
            '[' | ']' | '`' | '*' => i += 1,
            '!' if chars.get(i + 1) == Some(&'[') => i += 1,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The anchors a Markdown text defines: its headings' slugs (repeats
/// numbered as GitHub numbers them) and explicit HTML anchors.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = HashSet::new();
    let lines = prose_lines(text);
    let mut previous: Option<(usize, &str)> = None;
    for &(number, line) in &lines {
        let mut heading = None;
        let trimmed = line.trim_start();
        if line.len() - trimmed.len() <= 3 {
            let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
            let after = &trimmed[hashes..];
            if (1..=6).contains(&hashes) && (after.is_empty() || after.starts_with([' ', '\t'])) {
                // The closing sequence of `#`s, when it is one, is not text.
                let body = after.trim();
                let body = match body.trim_end_matches('#') {
                    stripped if stripped.is_empty() || stripped.ends_with([' ', '\t']) => {
                        stripped.trim_end()
                    }
                    _ => body,
                };
                heading = Some(body.to_owned());
            }
            // A setext underline makes the line before it a heading.
            let underline = trimmed.trim_end();
            if heading.is_none()
                && !underline.is_empty()
                && (underline.chars().all(|c| c == '=') || underline.chars().all(|c| c == '-'))
            {
                if let Some((before, text)) = previous {
                    if before + 1 == number && !text.trim().is_empty() && fence_of(text).is_none() {
                        heading = Some(text.trim().to_owned());
                    }
                }
            }
        }
        if let Some(heading) = heading {
            let base = slug(&heading);
            let count = seen.entry(base.clone()).or_insert(0);
            let anchor = if *count == 0 {
                base.clone()
            } else {
                format!("{base}-{count}")
            };
            *count += 1;
            anchors.insert(anchor);
        }
        for attribute in ["name=\"", "id=\""] {
            let mut rest = line;
            while let Some(at) = rest.find(attribute) {
                rest = &rest[at + attribute.len()..];
                if let Some((value, _)) = rest.split_once('"') {
                    anchors.insert(value.to_owned());
                }
            }
        }
        previous = Some((number, line));
    }
    anchors
}

/// `path` with `.` and `..` resolved lexically; `None` when it climbs out
/// of `root`'s tree.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// What is wrong with one link of `file` (relative to `root`), if anything.
fn check(
    root: &Path,
    file: &Path,
    target: &str,
    anchor_cache: &mut HashMap<PathBuf, Option<HashSet<String>>>,
) -> Option<String> {
    if has_scheme(target) || target.is_empty() {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    // A query string (`?raw=true`) is not part of the path.
    let path = path.split('?').next().unwrap_or(path);
    let relative = if path.is_empty() {
        file.to_path_buf()
    } else {
        let decoded = percent_decoded(path);
        let joined = match decoded.strip_prefix('/') {
            Some(from_root) => PathBuf::from(from_root),
            None => file.parent().unwrap_or(Path::new("")).join(&decoded),
        };
        match normalise(&joined) {
            Some(relative) => relative,
            None => return Some("outside the repository".to_owned()),
        }
    };
    let full = root.join(&relative);
    if !full.exists() {
        return Some(format!("no such file or directory: {}", relative.display()));
    }
    let anchor = anchor?;
    if anchor.is_empty() || relative.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let known = anchor_cache
        .entry(relative.clone())
        .or_insert_with(|| std::fs::read_to_string(&full).ok().map(|t| anchors(&t)));
    match known {
        Some(known) if known.contains(&percent_decoded(anchor)) => None,
        Some(_) => Some(format!("no heading `#{anchor}` in {}", relative.display())),
        None => Some(format!("cannot read {}", relative.display())),
    }
}

#[test]
fn every_relative_link_in_the_markdown_files_resolves() {
    let root = repo_root();
    let files = markdown_files(&root);
    assert!(
        files.iter().any(|f| f == Path::new("README.md")),
        "README.md not found among the Markdown files: {files:?}"
    );
    let mut anchor_cache = HashMap::new();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            broken.push(format!("{}: cannot be read", file.display()));
            continue;
        };
        for link in links(&text) {
            checked += 1;
            if let Some(why) = check(&root, file, &link.target, &mut anchor_cache) {
                broken.push(format!(
                    "{}:{} -> {} ({why})",
                    file.display(),
                    link.line,
                    link.target
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "{} broken link(s) among {checked} in {} Markdown files:\n{}",
        broken.len(),
        files.len(),
        broken.join("\n")
    );
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(slug("Hall (MQTT)"), "hall-mqtt");
    assert_eq!(
        slug("Setting up the hall's broker (TLS, passwords, ACL)"),
        "setting-up-the-halls-broker-tls-passwords-acl"
    );
    assert_eq!(
        slug("`chessclock-hall`, the hub"),
        "chessclock-hall-the-hub"
    );
    assert_eq!(slug("15. CHANGELOG"), "15-changelog");
    assert_eq!(
        slug("The [SPEC](protocol/SPEC.md) *rules*"),
        "the-spec-rules"
    );
    assert_eq!(slug("state_dir and pgn-dir"), "state_dir-and-pgn-dir");
    assert_eq!(slug("Press → display"), "press--display");
    let text = "# A\n\n## Notes\n\n```\n# Not a heading\n```\n\n## Notes\n\nSetext\n---\n";
    let found = anchors(text);
    for anchor in ["a", "notes", "notes-1", "setext"] {
        assert!(found.contains(anchor), "{anchor} in {found:?}");
    }
    assert!(!found.contains("not-a-heading"));
}

#[test]
fn links_in_code_are_not_links() {
    let text = "See [the spec](protocol/SPEC.md#4-framing) and ![a](b.svg \"t\").\n\
                `[not](a-link.md)` ``[nor](this.md)``\n\
                ```sh\n[inside](fence.md)\n```\n\
                ~~~~\n```\n[still](inside.md)\n~~~~\n\
                [ref]: docs/x.md\n\
                [nested (parens)](a_(b).md) <x> [angle](<with space.md>)\n";
    let found: Vec<(usize, String)> = links(text)
        .into_iter()
        .map(|l| (l.line, l.target))
        .collect();
    assert_eq!(
        found,
        [
            (1, "protocol/SPEC.md#4-framing".to_owned()),
            (1, "b.svg".to_owned()),
            (10, "docs/x.md".to_owned()),
            (11, "a_(b).md".to_owned()),
            (11, "with space.md".to_owned()),
        ]
    );
    assert!(has_scheme("https://lichess.org"));
    assert!(has_scheme("mailto:someone@example.invalid"));
    assert!(!has_scheme("docs/arbiter.md#watch"));
    assert!(!has_scheme("#hall-mqtt"));
}
