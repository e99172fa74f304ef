//! Criterion benchmark of the board core's work per press, as the timing
//! thread does it: the press (a button unit's frame) and the store's commit
//! that releases what waited for it (the ACK, the view, the history row, the
//! PGN). Measured with no PGN tags, with the largest tags a caller can set
//! (`limits::MAX_TAGS` tags of `limits::MAX_TAG_VALUE` characters), and with
//! thousands of tags (more than any interface accepts, put straight into the
//! board's setup) to show that the work does not grow with them.
//!
//! Each figure is the CPU time of the bench's thread per press
//! (`CLOCK_THREAD_CPUTIME_ID`, read around each game's presses), so what
//! else the machine runs does not count, as it would in wall time.
//!
//! `cargo bench -p chessclock-core --bench board`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a bench fails by panicking

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use chessclock_core::board::{
    Action, Board, BoardInput, BoardSetup, DeviceInput, DisplaySetup, GameSpec,
};
use chessclock_core::contract::Caller;
use chessclock_core::display::{ButtonSide, DisplayConfig, DisplaySide};
use chessclock_core::engine::{MatchControl, Micros, Settings, MS};
use chessclock_core::session::DeviceRole;
use chessclock_core::timecontrol::parse;
use chessclock_protocol::{Button, Capabilities, Hello, Roles, Text, PROTOCOL_VERSION};
use criterion::{criterion_group, criterion_main, Criterion};

const T0: Micros = 1_000_000_000;
const WALL0: i64 = 1_796_126_400_000_000;
/// Presses per game before a fresh board (the event numbers stay small and
/// the game's length stays that of a long real game).
const PRESSES_PER_GAME: u16 = 200;

fn tags(count: usize, value_chars: usize) -> BTreeMap<String, String> {
    (0..count)
        .map(|i| (format!("Tag{i:05}"), "x".repeat(value_chars)))
        .collect()
}

fn hello(roles: Roles, serial: &str) -> Hello {
    Hello {
        protocol_version: PROTOCOL_VERSION,
        roles,
        capabilities: Capabilities {
            displays: 2,
            digits: 5,
            tenths: true,
            text_chars: 16,
            ..Capabilities::default()
        },
        vendor: Text::truncated("bench"),
        model: Text::truncated("unit"),
        serial: Text::truncated(serial),
        firmware: Text::truncated("1.0"),
        boot_id: 7,
        first_unacked_event: 0,
    }
}

/// The last store record's sequence number among `actions`.
fn last_seq(actions: &[Action]) -> Option<u64> {
    actions.iter().rev().find_map(|a| match a {
        Action::Store { seq, .. } => Some(*seq),
        _ => None,
    })
}

/// A board with both units linked and the game started, everything
/// committed.
fn started(pgn_tags: BTreeMap<String, String>) -> Board {
    let setup = BoardSetup {
        id: "b1".into(),
        buttons: Some("serial:BU1".into()),
        displays: vec![DisplaySetup {
            name: "serial:DU1".into(),
            side: DisplaySide::Both,
        }],
        eboard: None,
        white_button: ButtonSide::Left,
        start_on_black_press: false,
        display: DisplayConfig::default(),
        moves_from_eboard: true,
        default_time_ms: 0,
        resume_after_restart: false,
        pgn_file: true,
        pgn_tags,
        state_notice: None,
    };
    let spec = GameSpec {
        text: "5400+30".into(),
        control: MatchControl::same(parse("5400+30").unwrap()),
        settings: Settings::default(),
    };
    let (mut board, actions) = Board::new(setup, spec, None, Caller::DAEMON, T0, WALL0);
    let mut seq = last_seq(&actions);
    let mut step = |board: &mut Board, input: BoardInput| {
        let actions = board.handle(T0, WALL0, input);
        seq = last_seq(&actions).or(seq);
        if let Some(seq) = seq {
            board.handle(T0, WALL0, BoardInput::Committed { seq, ok: true });
        }
    };
    for (role, roles, serial) in [
        (DeviceRole::Buttons, Roles::BUTTONS, "BU1"),
        (DeviceRole::Display(0), Roles::DISPLAY, "DU1"),
    ] {
        step(
            &mut board,
            BoardInput::Device(DeviceInput::Connected {
                role,
                hello: hello(roles, serial),
                path: "/dev/pts/1".into(),
            }),
        );
    }
    step(
        &mut board,
        BoardInput::Command {
            token: None,
            caller: Caller::DAEMON,
            command: chessclock_core::board::BoardCommand::Start,
        },
    );
    board
}

/// One press of game `n` and the commit of its record: the timing thread's
/// work for it.
fn press_and_commit(board: &mut Board, n: u16) -> usize {
    let at = T0 + i64::from(n) * 1_000 * MS;
    let wall = WALL0 + i64::from(n) * 1_000 * MS;
    let button = if n % 2 == 1 {
        Button::Left
    } else {
        Button::Right
    };
    let mut actions = board.handle(
        at,
        wall,
        BoardInput::Device(DeviceInput::Button {
            role: DeviceRole::Buttons,
            serial: "BU1".into(),
            event: n - 1,
            button,
            pressed: true,
            at,
            arrival: at,
        }),
    );
    let count = actions.len();
    let seq = last_seq(&actions).expect("the press is recorded");
    actions = board.handle(at, wall, BoardInput::Committed { seq, ok: true });
    assert!(
        actions.iter().any(|a| matches!(a, Action::Pgn(_))),
        "the commit hands the PGN over"
    );
    count + actions.len()
}

/// The CPU time this thread has used.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

fn bench_press(c: &mut Criterion) {
    let cases: [(&str, usize, usize); 4] = [
        ("press + commit, no tags", 0, 0),
        (
            "press + commit, 64 tags of 255 chars (the largest accepted)",
            64,
            255,
        ),
        (
            "press + commit, 1000 tags of 16 chars (beyond the limits)",
            1_000,
            16,
        ),
        (
            "press + commit, 5000 tags of 16 chars (beyond the limits)",
            5_000,
            16,
        ),
    ];
    let mut group = c.benchmark_group("board");
    group.sample_size(20);
    for (name, count, chars) in cases {
        let tags = tags(count, chars);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                // Games of PRESSES_PER_GAME presses, each timed as a whole
                // (a fresh board between them is not).
                let mut total = Duration::ZERO;
                let mut left = iters;
                while left > 0 {
                    let presses = left.min(u64::from(PRESSES_PER_GAME));
                    let mut board = started(tags.clone());
                    let start = thread_cpu();
                    for n in 1..=presses {
                        black_box(press_and_commit(&mut board, n as u16));
                    }
                    total += thread_cpu().saturating_sub(start);
                    left -= presses;
                }
                total
            })
        });
    }
    group.finish();
}

/// What moved off the timing thread: the control loop renders the PGN a
/// press hands over (100 presses into a game without an e-board).
fn bench_render(c: &mut Criterion) {
    let mut group = c.benchmark_group("control loop");
    group.sample_size(20);
    for (name, count, chars) in [
        ("render the PGN, no tags", 0, 0),
        ("render the PGN, 64 tags of 255 chars", 64, 255),
    ] {
        let mut board = started(tags(count, chars));
        for n in 1..=100 {
            press_and_commit(&mut board, n);
        }
        let game = board.pgn_game();
        group.bench_function(name, |b| b.iter(|| black_box(game.render())));
    }
    group.finish();
}

criterion_group!(benches, bench_press, bench_render);
criterion_main!(benches);
