//! The man pages that are not a command's `--help`: `chessclockd(8)` (from
//! the daemon's own argument definition, [`DaemonArgs`]) and
//! `chessclockd.toml(5)` (the configuration, key by key). `chessclockd
//! --man DIR` writes them; the repository keeps every program's pages in
//! `man/` (a test fails when they are stale), and the Debian package ships
//! those.

use std::path::Path;

use clap::{CommandFactory, Parser};

/// A FIDE-grade chess clock daemon for USB press buttons, LED displays and
/// DGT electronic boards.
#[derive(Debug, Parser)]
#[command(
    name = "chessclockd",
    version,
    about,
    long_about = "chessclockd runs the chess clocks of the boards in its configuration \
                  (default /etc/chessclockd/chessclockd.toml; without that file, embedded \
                  defaults): USB press-button and LED display units speaking the protocol \
                  of protocol/SPEC.md, DGT electronic boards, the state in SQLite so a crash \
                  loses nothing, and a D-Bus API (org.chessclockd.ChessClock1) that \
                  chessclockctl(1) drives. SIGTERM and SIGINT save and exit; SIGHUP reloads \
                  the configuration: each changed key is applied at once or logged as \
                  needing a restart (chessclockd --check-config FILE checks a file first). \
                  After a restart \
                  every running game comes back paused (FIDE Art. 6.10a) and the displays \
                  show how long the daemon was down (DOWN 0:14).",
    after_help = "Files:\n  /etc/chessclockd/chessclockd.toml  the configuration, see \
                  chessclockd.toml(5)\n  /var/lib/chessclockd/chessclockd.sqlite3  every game \
                  of every board\n\nSee also: chessclockctl(1), chessclockd.toml(5)"
)]
pub struct DaemonArgs {
    /// The configuration file.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_CONFIG)]
    pub config: std::path::PathBuf,
    /// Where the game state lives (overrides `daemon.state-dir`).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<std::path::PathBuf>,
    /// Keep the games in memory only: no state directory, NO crash safety
    /// (a crash or restart loses every game).
    #[arg(long, conflicts_with = "state_dir")]
    pub no_state: bool,
    /// Serve on the session bus.
    #[arg(long, conflicts_with = "system")]
    pub session: bool,
    /// Serve on the system bus.
    #[arg(long)]
    pub system: bool,
    /// One simulated board `demo` (button and display units on PTYs), on
    /// the session bus, with a terminal view when stdout is a terminal. Each
    /// run starts a fresh game (the last one stays in the record) unless
    /// --keep-state is given.
    #[arg(long)]
    pub demo: bool,
    /// With --demo: keep the game of the last demo run (paused if it ran).
    #[arg(long, requires = "demo")]
    pub keep_state: bool,
    /// More log output (-v: debug, -vv: trace).
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Check a configuration file and exit: prints `FILE: ok (N boards)`,
    /// or each error with its line and column (exit status 1). Opens
    /// neither the state directory nor the bus, so it is safe to run next
    /// to the running daemon before `systemctl reload chessclockd`.
    #[arg(long, value_name = "FILE", conflicts_with = "demo")]
    pub check_config: Option<std::path::PathBuf>,
    /// Write this program's man pages, chessclockd(8) and
    /// chessclockd.toml(5), into DIR and exit (the repository keeps them in
    /// man/).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["demo", "check_config"])]
    pub man: Option<std::path::PathBuf>,
}

/// The configuration file the daemon reads by default.
pub const DEFAULT_CONFIG: &str = "/etc/chessclockd/chessclockd.toml";

/// `chessclockd.8`.
pub fn daemon_page() -> std::io::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(DaemonArgs::command())
        .section("8")
        .render(&mut page)?;
    Ok(page)
}

/// Escapes text for roff: backslashes, and a leading dot or quote.
fn roff(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    if text.starts_with('.') || text.starts_with('\'') {
        format!("\\&{text}")
    } else {
        text
    }
}

/// A key of a section: `(key, value, meaning)`.
type Key = (&'static str, &'static str, &'static str);

/// Each section: its heading, what it is for, its keys.
const SECTIONS: &[(&str, &str, &[Key])] = &[
    (
        "[daemon]",
        "How the daemon runs.",
        &[
            ("state-dir", "path", "Where the SQLite state lives (default /var/lib/chessclockd). Every game of every board stays readable there (chessclockctl games)."),
            ("crash-safety", "bool", "true (the default): a state directory that cannot be used stops the daemon with an error; false: the daemon then runs from memory (a crash loses every game) and says so in chessclockctl status."),
            ("bus", "\"system\" | \"session\"", "The D-Bus bus to serve on (default system)."),
            ("rt-priority", "0..=99", "SCHED_FIFO priority of the timing thread; 0 does not ask (default 50)."),
            ("mlock", "bool", "Lock the daemon's memory (default true)."),
            ("resume-after-restart", "bool", "Resume running games after a restart instead of pausing them for the arbiter (default false, FIDE Art. 6.10a)."),
            ("admin-group", "group name", "Members of this group (and root) may change clocks (default chessclock)."),
            ("default-time-ms", "milliseconds", "FIDE Art. 6.7: the default time; 0 means present at the start."),
            ("require-ntp-for-scheduled-start", "bool", "Refuse chessclockctl start --at while the system clock is not NTP-synchronised, unless forced (default true)."),
            ("pgn-dir", "path", "Where the live PGN of each board is written (BOARD.pgn)."),
            ("watch-dirs", "list of paths", "Extra directories watched for devices appearing."),
            ("radios", "\"allow\" | \"forbid\"", "allow (the default): the host's radios (Wi-Fi, Bluetooth, others the kernel's rfkill knows) are reported (chessclockctl status --json, the hall's state); forbid: a radio that may transmit is a finding, printed by chessclockctl status, for a wired hall. Checked every 10 s; applied at once on reload."),
        ],
    ),
    (
        "[event]",
        "The PGN tags every board's games start with (a [[board]] key of the same name overrides one; chessclockctl tags sets them per game).",
        &[
            ("name", "text", "The Event tag."),
            ("site", "text", "The Site tag."),
            ("round", "text", "The Round tag: 3, or 3.1 for board 1 of round 3."),
        ],
    ),
    (
        "[engine]",
        "Defaults for every game (a preset may override them).",
        &[
            ("credit", "\"before-move\" | \"after-move\"", "When a Fischer increment is credited; before-move is FIDE/DGT (3+2 shows 3:02 at the start)."),
            ("stage-advance", "\"moves\" | \"flag\"", "moves: each side gets the next stage at its own N-th move; flag: both sides when either reaches zero (DGT moves = 000)."),
            ("freeze", "bool", "Whether the clock stops at a last-stage flag; absent: the FIDE default (with increment or delay only)."),
            ("move-count", "\"eboard\" | \"presses\"", "Where the move count comes from when an electronic board is attached."),
        ],
    ),
    (
        "[display]",
        "What the display units show.",
        &[
            ("tenths-below-ms", "milliseconds", "Show tenths of a second below this remaining time (default 20000). chessclockctl writes times the same way."),
            ("beep-on-control", "bool", "Beep when a time control is passed (units with a buzzer)."),
            ("beep-last-seconds", "count", "Beep in each of the last N seconds (0: never)."),
            ("brightness", "0..=255", "For units that support it (default 200)."),
        ],
    ),
    (
        "[presets]",
        "Named controls, added to the built-in ones (chessclockctl presets lists them with their prose); an entry of a built-in name replaces it.",
        &[
            ("NAME", "notation", "A control in the notation of chessclockctl(1): 900+10, 40/5400+30:1800+30, G/90;d5, *180, -."),
            ("NAME", "table", "description, and control (a notation or { type = \"byo-yomi\", main, periods, period } / { type = \"canadian\", main, moves, block }, in seconds) or white + black; credit, stage-advance, freeze override [engine]."),
        ],
    ),
    (
        "[[board]]",
        "One table per board.",
        &[
            ("id", "[A-Za-z0-9_]+", "The board's name (its D-Bus object); unique."),
            ("control", "preset or notation", "The control of a new game (default fide-rapid)."),
            ("buttons", "device", "The button unit: a path such as /dev/chessclock/buttons-CC0001, or serial:SERIAL."),
            ("displays", "list of devices", "The display units: paths, or tables { device = \"...\", side = \"white\" } for the side a one-panel unit shows (white, black, or both: the side whose clock runs)."),
            ("eboard", "device", "A DGT electronic board."),
            ("white-button", "\"left\" | \"right\"", "Which button of the unit is White's."),
            ("start-on-black-press", "bool", "Club practice: before the game, Black's press starts White's clock (default false: FIDE Art. 6.6, the arbiter starts the clocks)."),
            ("short-control", "bool", "The control gives under a minute of base time on purpose (default false: --check-config and the daemon warn that 15+10 is 15 seconds, as chessclockctl new asks for --yes)."),
            ("event, site, round, white, black", "text", "PGN tags of the board's games (over [event])."),
        ],
    ),
];

/// `chessclockd.toml.5`.
pub fn config_page() -> String {
    let mut page = String::new();
    page.push_str(&format!(
        ".TH CHESSCLOCKD.TOML 5 \"\" \"chessclockd {}\" \"File Formats\"\n",
        env!("CARGO_PKG_VERSION")
    ));
    page.push_str(
        ".SH NAME\nchessclockd.toml \\- configuration of the chessclockd chess clock daemon\n",
    );
    page.push_str(".SH DESCRIPTION\n");
    page.push_str(&roff(
        "chessclockd(8) reads /etc/chessclockd/chessclockd.toml (TOML). Every key is optional; \
         without the file the daemon runs on embedded defaults. Keys are kebab-case and an \
         unknown key is an error naming the file, line and column. After editing, \
         chessclockd --check-config FILE checks it, and systemctl reload chessclockd applies \
         it: each changed key is applied at once (added boards, admin-group, display, \
         presets, ...) or logged as needing a restart (state-dir, bus, rt-priority, a \
         board's devices, ...); a game in progress keeps its control.",
    ));
    page.push('\n');
    for (section, about, keys) in SECTIONS {
        page.push_str(&format!(".SH {}\n{}\n", roff(section), roff(about)));
        for (key, value, meaning) in keys.iter() {
            page.push_str(&format!(
                ".TP\n\\fB{}\\fR = \\fI{}\\fR\n{}\n",
                roff(key),
                roff(value),
                roff(meaning)
            ));
        }
    }
    page.push_str(".SH EXAMPLE\n.nf\n");
    for line in [
        "[daemon]",
        "admin-group = \"chessclock\"",
        "",
        "[[board]]",
        "id = \"board1\"",
        "control = \"fide-rapid\"",
        "buttons = \"/dev/chessclock/buttons-BU00042\"",
        "displays = [\"/dev/chessclock/display-DU7F3A\"]",
    ] {
        page.push_str(&roff(line));
        page.push('\n');
    }
    page.push_str(".fi\n.SH SEE ALSO\nchessclockd(8), chessclockctl(1)\n");
    page
}

/// Writes `chessclockd.8` and `chessclockd.toml.5` into `dir`.
pub fn write_daemon_pages(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("chessclockd.8"), daemon_page()?)?;
    std::fs::write(dir.join("chessclockd.toml.5"), config_page())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_name_what_they_document() {
        let daemon = String::from_utf8(daemon_page().unwrap()).unwrap();
        assert!(
            daemon.starts_with(".ie") || daemon.contains(".TH chessclockd 8"),
            "{daemon}"
        );
        assert!(daemon.contains("keep\\-state"));
        let config = config_page();
        assert!(config.contains(".TH CHESSCLOCKD.TOML 5"));
        assert!(config.contains("start\\-on\\-black\\-press"));
        assert!(config.contains("tenths\\-below\\-ms"));
        DaemonArgs::command().debug_assert();
    }

    #[test]
    fn every_key_of_the_default_config_is_documented() {
        let value = toml::Value::try_from(crate::config::Config::default()).unwrap();
        let page = config_page();
        for section in ["daemon", "event", "engine", "display"] {
            for key in value[section].as_table().unwrap().keys() {
                assert!(
                    page.contains(&format!("\\fB{}\\fR", roff(key))),
                    "{section}.{key}"
                );
            }
        }
    }
}
