//! The view drawn as text.

use super::board::BoardPanel;
use super::digits::draw_time;
use super::*;
use crate::unit::LinkState;
use crate::unit::{Activity, UnitStats};
use chessclock_protocol::{DisplayState, Icons};
use chessclock_protocol::{Leds, Text};

fn unit(name: &str, kind: UnitKind) -> UnitSnapshot {
    UnitSnapshot {
        name: name.into(),
        kind,
        serial: format!("SIM-{name}"),
        displays: 2,
        digits: 5,
        text_chars: 16,
        plugged: true,
        low_power: false,
        pty: Some("/dev/pts/7".into()),
        link: Some(format!("/tmp/cc/{name}").into()),
        link_state: LinkState::Up,
        display: None,
        leds: Leds::default(),
        beeps: 0,
        beeping_until_us: 0,
        unacked: 0,
        stats: UnitStats::default(),
        faults_active: false,
        recent: Vec::new(),
    }
}

#[test]
fn glyph_widths_add_up() {
    assert_eq!(time_width("1:29:59", Scale::Big), 5 * 6 + 2 * 2 + 6);
    assert_eq!(time_width("0:19.7", Scale::Narrow), 4 * 3 + 2 + 5);
    assert_eq!(time_width("4:59", Scale::Text), 4);
}

#[test]
fn times_fit_the_panel_positions_like_the_spec_says() {
    assert_eq!(fit_time("1:29:59", 5), "1:29:59");
    assert_eq!(fit_time("1:29:59", 4), "29:59");
    assert_eq!(fit_time("0:19.7", 4), "0:19.7");
    assert_eq!(fit_time("12:34:56", 5), "2:34:56");
    assert_eq!(fit_time("4:59", 0), "4:59");
    assert_eq!(fit_time("", 5), "");
}

#[test]
fn big_digits_draw_the_pattern() {
    let mut canvas = Canvas::new(8, 5);
    draw_time(&mut canvas, 0, 0, "1", Scale::Big, Tone::Led);
    assert_eq!(canvas.to_text(), "  ██\n████\n  ██\n  ██\n██████\n");
}

fn playing() -> UnitSnapshot {
    let mut display = unit("display", UnitKind::Display);
    let mut state = DisplayState::default();
    state.left.time = Text::new("1:29:59").unwrap();
    state.left.icons = Icons::RUNNING;
    state.left.moves = 12;
    state.left.stage = 1;
    state.right.time = Text::new("0:19.7").unwrap();
    state.right.icons = Icons(Icons::FLAG.0 | Icons::BONUS.0);
    state.right.moves = 0xFFFF;
    state.text = Text::new("ARBITER").unwrap();
    display.display = Some(state);
    display
}

#[test]
fn wide_terminal_shows_big_digits_icons_and_leds() {
    let mut buttons = unit("buttons", UnitKind::Buttons);
    buttons.leds.left = true;
    buttons.unacked = 2;
    buttons.recent = vec![
        Activity {
            at_us: 2_500_000,
            text: "ACK event 4 (sent 1×)".into(),
            count: 1,
        },
        Activity {
            at_us: 1_500_000,
            text: "bad frame from host (bad-crc)".into(),
            count: 3,
        },
    ];
    let status = ViewStatus {
        message: "left pressed".into(),
        ..ViewStatus::default()
    };
    let canvas = render(&[playing(), buttons], &status, 120, 30);
    let text = canvas.to_text();
    assert!(
        text.contains("display (display) · SIM-display · /tmp/cc/display → /dev/pts/7"),
        "{text}"
    );
    assert!(text.contains("● link up"), "{text}");
    assert!(text.contains("LEFT  moves 12  stage 1"), "{text}");
    assert!(text.contains("▶ RUNNING"), "{text}");
    assert!(text.contains("⚑ FLAG  + BONUS"), "{text}");
    assert!(text.contains("« ARBITER »"), "{text}");
    assert!(text.contains("[ ● LEFT ]"), "{text}");
    assert!(text.contains("[ ○ RIGHT ]"), "{text}");
    assert!(text.contains("unacked 2"), "{text}");
    assert!(text.contains("left pressed"), "{text}");
    let older = text
        .find("    1.500 s  buttons  bad frame from host (bad-crc)  ×3")
        .expect(&text);
    let newer = text
        .find("    2.500 s  buttons  ACK event 4 (sent 1×)")
        .expect(&text);
    assert!(older < newer, "oldest first");
    // Big digits: the `1` of 1:29:59 begins with a 2-column pixel, rows
    // of 2-column pixels follow; the left (running) side is lit.
    let big_rows = text.lines().filter(|l| l.contains("██████")).count();
    assert_eq!(big_rows, 3, "{text}");
    assert_eq!(choose_scale(&[playing()], 120, 30), Scale::Big);
    let lit = canvas
        .cells
        .iter()
        .filter(|c| c.ch == '█' && c.tone == Tone::Led)
        .count();
    let idle = canvas
        .cells
        .iter()
        .filter(|c| c.ch == '█' && c.tone == Tone::LedIdle)
        .count();
    assert!(lit > 0 && idle > 0);
}

#[test]
fn narrow_terminal_falls_back_to_smaller_digits() {
    assert_eq!(choose_scale(&[playing()], 60, 24), Scale::Narrow);
    assert_eq!(choose_scale(&[playing()], 120, 15), Scale::Big);
    assert_eq!(choose_scale(&[playing()], 120, 12), Scale::Text);
    let mut blitz = playing();
    if let Some(d) = blitz.display.as_mut() {
        d.left.time = Text::new("4:59").unwrap();
        d.right.time = Text::new("3:07").unwrap();
    }
    assert_eq!(choose_scale(&[blitz], 80, 24), Scale::Big);
    assert_eq!(choose_scale(&[playing()], 40, 8), Scale::Text);
    let text = render(&[playing()], &ViewStatus::default(), 60, 24).to_text();
    // Narrow `1` of 1:29:59: one column per pixel.
    assert!(
        text.lines().any(|l| l.contains("███   ███ ███   ███ ███")),
        "{text}"
    );
    assert!(text.contains("/tmp/c… ─── ● link up"), "{text}");
    let tiny = render(&[playing()], &ViewStatus::default(), 40, 8).to_text();
    assert!(
        tiny.contains("1:29:59") && tiny.contains("0:19.7"),
        "{tiny}"
    );
}

#[test]
fn unplugged_and_lost_units_say_so() {
    let mut display = playing();
    display.link_state = LinkState::Lost;
    let mut buttons = unit("buttons", UnitKind::Buttons);
    buttons.plugged = false;
    let text = render(&[display, buttons], &ViewStatus::default(), 120, 30).to_text();
    assert!(text.contains("✖ LINK LOST"), "{text}");
    assert!(text.contains("⏏ UNPLUGGED"), "{text}");
    let mut blank = unit("display", UnitKind::Display);
    blank.display = None;
    let text = render(&[blank], &ViewStatus::default(), 120, 30).to_text();
    assert!(text.contains("waiting for the host"), "{text}");
}

#[test]
fn any_size_renders_without_panic() {
    let mut display = unit("display", UnitKind::Display);
    display.display = Some(DisplayState::default());
    let mut buttons = unit("buttons", UnitKind::Buttons);
    buttons.recent = vec![Activity {
        at_us: -5,
        text: "é".repeat(500),
        count: 9,
    }];
    let units = [display, buttons, unit("both", UnitKind::Combined)];
    let status = ViewStatus {
        message: "x".repeat(300),
        script: Some("step 1/2".into()),
        now_us: 0,
        origin_us: 0,
        board: Some(BoardPanel {
            title: "t".repeat(200),
            lines: vec![("l".repeat(300), Tone::Good); 3],
            left: "WHITE".into(),
            right: "BLACK".into(),
            keys: "k".into(),
        }),
    };
    for width in [0u16, 1, 2, 3, 5, 10, 40, 80, 200] {
        for height in [0u16, 1, 2, 3, 7, 24, 60] {
            let canvas = render(&units, &status, width, height);
            assert_eq!(canvas.cells.len(), usize::from(width) * usize::from(height));
        }
    }
}

fn demo_state(started: bool) -> chessclock_core::views::StateView {
    serde_json::from_value(serde_json::json!({
        "t": 1000, "running": if started { serde_json::json!("white") } else { serde_json::Value::Null },
        "paused": false, "flags": [],
        "white": {"remaining_ms": 303000, "used_ms": 0, "moves": 0, "stage": 1, "flag_ms": null,
                  "delay_left_ms": null, "periods_left": null, "in_overtime": false},
        "black": {"remaining_ms": 303000, "used_ms": 0, "moves": 0, "stage": 1, "flag_ms": null,
                  "delay_left_ms": null, "periods_left": null, "in_overtime": false},
        "board": "demo", "control": "300+3", "started": started, "frozen": false,
        "to_move": "white", "game_ms": 0, "game_epoch_us": 0, "time_since_start_ms": null,
        "default_time_ms": 0, "default_time_overrun": [], "down_time_ms": null,
        "arbiter_called": false, "scheduled_start_ms": null, "devices": [], "eboard": null,
        "control_prose": "5 min; 3 s per move from move 1"
    }))
    .unwrap()
}

/// The demo names White and Black, says the control in words, how to
/// start, what to press after an arbiter call, and how to reach the bus.
#[test]
fn the_demo_board_tells_a_newcomer_what_to_do() {
    use super::board::{BoardPanel, DemoInfo};
    let info = DemoInfo {
        bus: "From another terminal: chessclockctl --user status demo".into(),
        white_left: true,
        start_on_black_press: true,
        notice: None,
    };
    let panel = BoardPanel::of(&demo_state(false), &info);
    assert_eq!(
        panel.title,
        "board demo · 300+3 · 5 min; 3 s per move from move 1"
    );
    assert_eq!(
        panel.lines[0].0,
        "To start, press l: Black's button starts White's clock. Then each side presses its own button after its move."
    );
    let mut display = unit("display", UnitKind::Display);
    let mut state = DisplayState::default();
    state.left.time = Text::new("5:03").unwrap();
    state.right.time = Text::new("5:03").unwrap();
    display.display = Some(state);
    let status = ViewStatus {
        board: Some(panel),
        ..ViewStatus::default()
    };
    let text = render(
        &[display, unit("buttons", UnitKind::Buttons)],
        &status,
        100,
        40,
    )
    .to_text();
    assert!(
        text.contains("WHITE · key a") && text.contains("BLACK · key l"),
        "{text}"
    );
    assert!(
        text.contains("press l: Black's button starts White's clock"),
        "{text}"
    );
    assert!(text.contains("chessclockctl --user status demo"), "{text}");
    assert!(text.contains("r resume · n new game"), "{text}");
    let mut called = demo_state(true);
    called.arbiter_called = true;
    called.paused = true;
    called.running = None;
    let panel = BoardPanel::of(&called, &info);
    assert!(
        panel.lines[0].0.contains("Press r to resume"),
        "{:?}",
        panel.lines
    );
    let running = BoardPanel::of(&demo_state(true), &info);
    assert_eq!(
        running.lines[0].0,
        "White to move: White presses a after the move."
    );
}
