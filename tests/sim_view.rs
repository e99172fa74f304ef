//! The interactive view of running units: what the host sends is drawn as
//! big digits with icons, rendered into a text grid (not a terminal).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

mod kit;
use std::sync::Mutex;

use chessclock_protocol::{DisplayState, Icons, Leds, Message, Text};
use chessclock_sim_units::view::{render, Tone, ViewStatus};
use chessclock_sim_units::{self as sim, SimOptions};
use kit::units::{Host, WAIT};

static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn running_units_render_what_the_host_sent() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let units = sim::spawn_units(&SimOptions::demo()).unwrap();
    let mut display = Host::open(units.path("display").unwrap());
    let mut buttons = Host::open(units.path("buttons").unwrap());
    display.handshake(250, 1000);
    buttons.handshake(250, 1000);

    let mut state = DisplayState::default();
    state.left.time = Text::new("1:30:00").unwrap();
    state.left.moves = 0;
    state.right.time = Text::new("1:29:41").unwrap();
    state.right.icons = Icons(Icons::RUNNING.0 | Icons::BONUS.0);
    state.right.moves = 1;
    state.right.stage = 1;
    state.text = Text::new("WHITE TO MOVE").unwrap();
    display.send(Message::Display(state));
    buttons.send(Message::Leds(Leds {
        left: false,
        right: true,
        arbiter: false,
    }));
    units
        .wait_until("display", WAIT, |s| {
            s.display
                .is_some_and(|d| d.text.as_str() == "WHITE TO MOVE")
        })
        .unwrap();
    units.wait_until("buttons", WAIT, |s| s.leds.right).unwrap();

    let snapshots = units.snapshots();
    let canvas = render(&snapshots, &ViewStatus::default(), 100, 30);
    let text = canvas.to_text();
    assert!(text.contains("« WHITE TO MOVE »"), "{text}");
    assert!(text.contains("RIGHT  moves 1  stage 1"), "{text}");
    assert!(text.contains("▶ RUNNING"), "{text}");
    assert!(
        text.contains("[ ● RIGHT ]") && text.contains("[ ○ LEFT ]"),
        "{text}"
    );
    assert_eq!(text.matches("● link up").count(), 2, "{text}");
    // The activity feed tells what happened, in order.
    let welcome = text.find("WELCOME: heartbeat 250 ms").expect(&text);
    let shown = text
        .find("display 1:30:00 | 1:29:41 · WHITE TO MOVE")
        .expect(&text);
    assert!(welcome < shown, "{text}");
    assert!(text.contains("LEDs ○ left ○ arbiter ● right"), "{text}");
    // The running (right) side's digits are lit, the left side's idle.
    let half = usize::from(canvas.width) / 2;
    let lit_right = canvas
        .cells
        .iter()
        .enumerate()
        .filter(|(i, c)| c.tone == Tone::Led && i % usize::from(canvas.width) > half)
        .count();
    let lit_left = canvas
        .cells
        .iter()
        .enumerate()
        .filter(|(i, c)| c.tone == Tone::Led && i % usize::from(canvas.width) < half)
        .count();
    assert!(
        lit_right > 40 && lit_left == 0,
        "right {lit_right}, left {lit_left}"
    );
    // Big 5-row digits: a row of `1:29:41`'s bottom line on the right.
    assert!(text.lines().filter(|l| l.contains('█')).count() >= 5);

    // A tiny terminal still renders, without panicking.
    let tiny = render(&snapshots, &ViewStatus::default(), 12, 3);
    assert_eq!(tiny.cells.len(), 36);
}
