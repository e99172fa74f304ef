//! SPEC 5.7 and 8: what the whole runtime (timing thread, store, device
//! manager) sends the display units on their PTYs. Times are set by the
//! arbiter's corrections while no clock runs, so every expected text is
//! exact; where a clock runs, the tests wait for a picture, never for a time.

use super::*;

const ROOT: chessclockd::control::Caller = chessclockd::control::Caller::uid(0);

/// A display unit's HELLO: `displays` panels of `digits` digits, the tenths
/// flag, `levels` brightness levels.
fn display_unit(serial: &str, displays: u8, digits: u8, tenths: bool, levels: u8) -> Hello {
    Hello {
        capabilities: Capabilities {
            displays,
            digits,
            tenths,
            brightness_levels: levels,
            text_chars: 16,
            ..Capabilities::default()
        },
        ..hello(DISPLAY, serial)
    }
}

/// A board of display units only (no button unit configured).
fn display_board(id: &str, displays: &[(&Path, DisplaySide)]) -> BoardConfig {
    let mut board = board(id, None, &[]);
    board.control = "60".into();
    board.displays = displays
        .iter()
        .map(|(path, side)| DisplayRef {
            device: DeviceRef::Path(path.to_path_buf()),
            side: *side,
        })
        .collect();
    board
}

fn runtime_config(boards: Vec<BoardConfig>, display: DisplayConfig) -> Config {
    let mut config = Config::default();
    config.daemon.rt_priority = 0;
    config.daemon.mlock = false;
    config.display = display;
    config.boards = boards;
    config
}

fn start_runtime(dir: &Path, config: Config) -> Runtime {
    Runtime::start(config, Some(dir.join("state")), Devices::Manager).unwrap()
}

async fn command(runtime: &Runtime, board: &str, command: Command) {
    let reply = timeout(
        Duration::from_secs(5),
        runtime.handle().call(board, command.clone(), ROOT),
    )
    .await
    .expect("a reply within 5 s");
    if let Err(error) = reply {
        panic!("{command:?} refused: {error}");
    }
}

/// The arbiter sets both remaining times (ms) while no clock runs.
async fn set_times(runtime: &Runtime, board: &str, white_ms: i64, black_ms: i64) {
    for (side, ms) in [(Side::White, white_ms), (Side::Black, black_ms)] {
        let adjust = Command::Adjust {
            side,
            remaining_ms: Some(ms),
            moves: None,
            stage: None,
        };
        command(runtime, board, adjust).await;
    }
}

/// Waits until unit `index` of `units` is sent a DISPLAY that `want`
/// accepts and returns it; every unit says a heartbeat every 100 ms
/// meanwhile, so none loses its link. Fails after 5 s with the last
/// DISPLAY seen. Every DISPLAY received is checked against SPEC 8.2: the
/// host never sends LINK_LOST or LOW_POWER.
async fn display_until(
    units: &mut [FakeDevice],
    index: usize,
    what: &str,
    want: impl Fn(&DisplayState) -> bool,
) -> DisplayState {
    let mut seen = displays_until(units, index, what, want).await;
    seen.pop().unwrap()
}

/// [`display_until`], returning every DISPLAY unit `index` was sent on the
/// way, the accepted one last.
async fn displays_until(
    units: &mut [FakeDevice],
    index: usize,
    what: &str,
    want: impl Fn(&DisplayState) -> bool,
) -> Vec<DisplayState> {
    let mut seen: Vec<DisplayState> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut next_beat = Instant::now();
    loop {
        let now = Instant::now();
        if now >= next_beat {
            for unit in units.iter_mut() {
                unit.send(Message::DeviceHeartbeat {
                    device_time_us: device_time(monotonic_now_us()),
                    low_power: false,
                })
                .await;
            }
            next_beat = now + Duration::from_millis(100);
        }
        assert!(
            now < deadline,
            "{what}: not sent within 5 s; the last DISPLAY was {:?}",
            seen.last()
        );
        let wait = next_beat.min(deadline).saturating_duration_since(now);
        if let Some(Frame {
            message: Message::Display(state),
            ..
        }) = units[index].recv(wait).await
        {
            for panel in [&state.left, &state.right] {
                assert_eq!(
                    panel.icons.0 & Icons::DEVICE_OWN.0,
                    0,
                    "SPEC 8.2: the host sent LINK_LOST or LOW_POWER: {state:?}"
                );
            }
            let done = want(&state);
            seen.push(state);
            if done {
                return seen;
            }
        }
    }
}

/// (White ms, Black ms) set by the arbiter, and the (left, right) texts
/// each of `N` units shows then.
type Step<const N: usize> = ((i64, i64), [(&'static str, &'static str); N]);

/// The panels' time texts, left and right.
fn times(state: &DisplayState) -> (&str, &str) {
    (state.left.time.as_str(), state.right.time.as_str())
}

/// Waits until unit `index` shows exactly `left` and `right`.
async fn shows(units: &mut [FakeDevice], index: usize, left: &str, right: &str) {
    let what = format!("unit {index} showing {left:?} | {right:?}");
    display_until(units, index, &what, |s| times(s) == (left, right)).await;
}

/// Plugs and welcomes each of `hellos` at its own link under `dir`.
async fn plug_units(dir: &Path, hellos: &[(&str, Hello)]) -> Vec<FakeDevice> {
    let mut units = Vec::new();
    for (name, hello) in hellos {
        let mut unit = FakeDevice::plug(&dir.join(name));
        unit.handshake(*hello).await;
        units.push(unit);
    }
    units
}

/// SPEC 8.1: a unit renders for its declared digits. From one hour a
/// 4-digit unit gets `H.MM` (minutes rounded up: `1.30` for 1:29:30, `1.00`
/// for the last second above one hour, then `59:59`); a 5-digit unit gets
/// `H:MM:SS` up to `9:59:59` and `10.00` at ten hours; a 6-digit unit
/// `H:MM:SS` there too. Tenths (threshold set to 2 h here) only where they
/// fit: below 10 min on 4 digits, below 1 h on 5 and 6.
#[test]
fn spec_8_1_a_four_digit_unit_is_sent_hours_as_h_mm() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let paths = ["d4", "d5", "d6"].map(|name| dir.path().join(name));
        let board = display_board(
            "b40",
            &[
                (&paths[0], DisplaySide::Both),
                (&paths[1], DisplaySide::Both),
                (&paths[2], DisplaySide::Both),
            ],
        );
        let display = DisplayConfig {
            tenths_below_ms: 2 * 3_600_000,
            ..DisplayConfig::default()
        };
        let runtime = start_runtime(dir.path(), runtime_config(vec![board], display));
        let mut units = plug_units(
            dir.path(),
            &[
                ("d4", display_unit("CC0040", 2, 4, true, 0)),
                ("d5", display_unit("CC0041", 2, 5, true, 0)),
                ("d6", display_unit("CC0042", 2, 6, true, 0)),
            ],
        )
        .await;
        // (White ms, Black ms) and what the 4-, 5- and 6-digit units show.
        let steps: [Step<3>; 5] = [
            (
                (5_370_000, 36_000_000),
                [
                    ("1.30", "10.00"),
                    ("1:29:30", "10.00"),
                    ("1:29:30", "10:00:00"),
                ],
            ),
            (
                (3_599_500, 35_999_000),
                [
                    ("1.00", "10.00"),
                    ("59:59.5", "9:59:59"),
                    ("59:59.5", "9:59:59"),
                ],
            ),
            (
                (3_599_000, 3_600_000),
                [
                    ("59:59", "1.00"),
                    ("59:59.0", "1:00:00"),
                    ("59:59.0", "1:00:00"),
                ],
            ),
            (
                (600_000, 3_601_000),
                [
                    ("10:00", "1.01"),
                    ("10:00.0", "1:00:01"),
                    ("10:00.0", "1:00:01"),
                ],
            ),
            (
                (599_900, 359_999_000),
                [
                    ("9:59.9", "99.59"),
                    ("9:59.9", "100.00"),
                    ("9:59.9", "99:59:59"),
                ],
            ),
        ];
        for ((white, black), shown) in steps {
            set_times(&runtime, "b40", white, black).await;
            for (index, (left, right)) in shown.into_iter().enumerate() {
                shows(&mut units, index, left, right).await;
            }
        }
        runtime.shutdown().await;
    });
}

/// SPEC 8.1: a remaining time is rounded up to the unit shown (so `0:00`
/// only with the flag), and tenths start once the rounded-up tenths are
/// below the threshold (default 20 s: `0:20` is followed by `0:19.9`,
/// never by `0:20.0`), on a unit with the tenths flag only.
#[test]
fn spec_8_1_times_are_rounded_up_and_tenths_start_below_the_threshold() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let tenths = dir.path().join("tenths");
        let whole = dir.path().join("whole");
        let board = display_board(
            "b41",
            &[(&tenths, DisplaySide::Both), (&whole, DisplaySide::Both)],
        );
        let runtime = start_runtime(
            dir.path(),
            runtime_config(vec![board], DisplayConfig::default()),
        );
        let mut units = plug_units(
            dir.path(),
            &[
                ("tenths", display_unit("CC0043", 2, 5, true, 0)),
                ("whole", display_unit("CC0044", 2, 5, false, 0)),
            ],
        )
        .await;
        // (White ms, Black ms), then what the unit with tenths and the
        // unit without show.
        let steps: [Step<2>; 4] = [
            ((19_950, 59_001), [("0:20", "1:00"), ("0:20", "1:00")]),
            ((19_901, 59_000), [("0:20", "0:59"), ("0:20", "0:59")]),
            ((19_900, 20_001), [("0:19.9", "0:21"), ("0:20", "0:21")]),
            ((1, 101), [("0:00.1", "0:00.2"), ("0:01", "0:01")]),
        ];
        for ((white, black), shown) in steps {
            set_times(&runtime, "b41", white, black).await;
            for (index, (left, right)) in shown.into_iter().enumerate() {
                shows(&mut units, index, left, right).await;
            }
        }

        // White's last 0.3 s run out: `0:00.0` comes with the flag, never
        // before it, and the shown time never goes up.
        set_times(&runtime, "b41", 300, 60_000).await;
        shows(&mut units, 0, "0:00.3", "1:00").await;
        command(&runtime, "b41", Command::Start).await;
        let run = displays_until(&mut units, 0, "White's flag", |s| {
            s.left.icons.contains(Icons::FLAG)
        })
        .await;
        let (flagged, before) = run.split_last().unwrap();
        assert_eq!(flagged.left.time.as_str(), "0:00.0");
        let tenths = |text: &str| -> u32 {
            let (_, rest) = text.split_once(':').unwrap();
            rest.replace('.', "").parse().unwrap()
        };
        let mut shown = 3;
        for state in before {
            let text = state.left.time.as_str();
            assert_ne!(text, "0:00.0", "zero shown before the flag: {before:?}");
            assert!(tenths(text) <= shown, "the time went up: {before:?}");
            shown = tenths(text);
        }
        runtime.shutdown().await;
    });
}

/// SPEC 8.2: the displays of a board whose button unit has no link get
/// NO_BUTTONS on both panels and the text `NO BUTTONS`, never LINK_LOST
/// (checked on every DISPLAY by [`display_until`]); both go when the button
/// unit links and come back when it is unplugged.
#[test]
fn spec_8_2_a_board_without_its_button_unit_sends_no_buttons_never_link_lost() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let buttons = dir.path().join("buttons");
        let display = dir.path().join("display");
        let mut board = board("b42", Some(&buttons), &[&display]);
        board.control = "60".into();
        let runtime = start_runtime(
            dir.path(),
            runtime_config(vec![board], DisplayConfig::default()),
        );
        let mut units = plug_units(
            dir.path(),
            &[("display", display_unit("CC0045", 2, 5, true, 0))],
        )
        .await;
        let no_buttons = |s: &DisplayState| {
            s.left.icons.contains(Icons::NO_BUTTONS) && s.right.icons.contains(Icons::NO_BUTTONS)
        };
        let lost = display_until(&mut units, 0, "NO_BUTTONS", no_buttons).await;
        assert_eq!(lost.text.as_str(), "NO BUTTONS");
        assert_eq!(times(&lost), ("1:00", "1:00"));

        // The button unit is plugged and links: the mark goes.
        let mut unit = FakeDevice::plug(&buttons);
        unit.handshake(hello(BUTTONS, "CC0046")).await;
        units.push(unit);
        let linked = display_until(&mut units, 0, "NO_BUTTONS gone", |s| {
            s.left.icons.0 & Icons::NO_BUTTONS.0 == 0 && s.right.icons.0 & Icons::NO_BUTTONS.0 == 0
        })
        .await;
        assert_eq!(linked.text.as_str(), "");

        // Unplugged: the mark comes back, still without LINK_LOST.
        drop(units.pop());
        std::fs::remove_file(&buttons).unwrap();
        let lost = display_until(&mut units, 0, "NO_BUTTONS again", no_buttons).await;
        assert_eq!(lost.text.as_str(), "NO BUTTONS");
        runtime.shutdown().await;
    });
}

/// A board with one two-panel display unit (5 digits, tenths) showing both
/// sides, linked: the runtime and the unit.
async fn one_display_board(dir: &Path, id: &str, serial: &str) -> (Runtime, Vec<FakeDevice>) {
    let display = dir.join("display");
    let board = display_board(id, &[(&display, DisplaySide::Both)]);
    let runtime = start_runtime(dir, runtime_config(vec![board], DisplayConfig::default()));
    let units = plug_units(dir, &[("display", display_unit(serial, 2, 5, true, 0))]).await;
    (runtime, units)
}

fn has_flag(panel: &Panel) -> bool {
    panel.icons.contains(Icons::FLAG)
}

fn has_first_flag(panel: &Panel) -> bool {
    panel.icons.contains(Icons::FIRST_FLAG)
}

/// SPEC 8.2: FIRST_FLAG is set with the first flag, alongside its FLAG, on
/// that side only, and stays there when the other flag falls.
#[test]
fn spec_8_2_first_flag_marks_the_side_that_fell_first_and_keeps_it() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let (runtime, mut units) = one_display_board(dir.path(), "b43", "CC0047").await;

        set_times(&runtime, "b43", 200, 300).await;
        shows(&mut units, 0, "0:00.2", "0:00.3").await;
        command(&runtime, "b43", Command::Start).await;
        let run = displays_until(&mut units, 0, "White's flag", |s| has_flag(&s.left)).await;
        let (fallen, before) = run.split_last().unwrap();
        for state in before {
            assert!(
                !has_first_flag(&state.left) && !has_first_flag(&state.right),
                "{run:?}"
            );
        }
        assert!(
            has_first_flag(&fallen.left),
            "FIRST_FLAG with the flag: {fallen:?}"
        );
        assert!(
            !has_flag(&fallen.right) && !has_first_flag(&fallen.right),
            "{fallen:?}"
        );

        // White moves after its flag; Black's flag falls second.
        command(&runtime, "b43", Command::Press { side: Side::White }).await;
        let run = displays_until(&mut units, 0, "Black's flag", |s| has_flag(&s.right)).await;
        for state in &run {
            assert!(
                has_flag(&state.left) && has_first_flag(&state.left),
                "{run:?}"
            );
            assert!(
                !has_first_flag(&state.right),
                "never on both sides: {run:?}"
            );
        }
        runtime.shutdown().await;
    });
}

/// SPEC 8.1: a one-panel unit shows the side it is configured for in
/// `left`, with a blank `right` panel; `side = "both"` shows the side whose
/// clock runs, else the side to move (issue 14: Black's time on a one-panel
/// unit).
#[test]
fn spec_8_1_a_one_panel_unit_shows_the_side_it_is_configured_for() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let paths = ["white", "black", "both"].map(|name| dir.path().join(name));
        let board = display_board(
            "b44",
            &[
                (&paths[0], DisplaySide::White),
                (&paths[1], DisplaySide::Black),
                (&paths[2], DisplaySide::Both),
            ],
        );
        let runtime = start_runtime(
            dir.path(),
            runtime_config(vec![board], DisplayConfig::default()),
        );
        let mut units = plug_units(
            dir.path(),
            &[
                ("white", display_unit("CC0048", 1, 5, true, 0)),
                ("black", display_unit("CC0049", 1, 5, true, 0)),
                ("both", display_unit("CC0050", 1, 5, true, 0)),
            ],
        )
        .await;
        let blank = Panel {
            time: Text::empty(),
            icons: Icons(0),
            moves: 0xFFFF,
            stage: 0,
        };
        set_times(&runtime, "b44", 61_000, 182_000).await;
        for (index, left) in [(0, "1:01"), (1, "3:02"), (2, "1:01")] {
            let shown =
                display_until(&mut units, index, left, |s| s.left.time.as_str() == left).await;
            assert_eq!(shown.right, blank, "unit {index}: {shown:?}");
        }
        // White moves: Black's clock runs, and the `both` unit follows it.
        command(&runtime, "b44", Command::Start).await;
        command(&runtime, "b44", Command::Press { side: Side::White }).await;
        let shown = display_until(&mut units, 2, "Black's running clock", |s| {
            s.left.icons.contains(Icons::RUNNING) && s.left.time.as_str().starts_with("3:0")
        })
        .await;
        assert_eq!(shown.right, blank);
        let shown = display_until(&mut units, 1, "Black's running clock", |s| {
            s.left.icons.contains(Icons::RUNNING)
        })
        .await;
        assert!(shown.left.time.as_str().starts_with("3:0"), "{shown:?}");
        assert_eq!(shown.right, blank);
        runtime.shutdown().await;
    });
}

/// SPEC 5.7: `[display] brightness` b (0..=255) is sent as
/// `round(b × (L − 1) / 255)` to a unit with L levels (0 when L is 0), and a
/// reload applies a new setting to every unit.
#[test]
fn spec_5_7_brightness_is_scaled_to_the_units_declared_levels() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let levels = [0u8, 2, 8, 255];
        let names = ["l0", "l2", "l8", "l255"];
        let paths = names.map(|name| dir.path().join(name));
        let displays: Vec<(&Path, DisplaySide)> = paths
            .iter()
            .map(|p| (p.as_path(), DisplaySide::Both))
            .collect();
        let board = display_board("b45", &displays);
        let setting = |brightness| DisplayConfig {
            brightness,
            ..DisplayConfig::default()
        };
        let config = runtime_config(vec![board], setting(128));
        let mut runtime = start_runtime(dir.path(), config.clone());
        let hellos: Vec<(&str, Hello)> = names
            .iter()
            .zip(levels)
            .enumerate()
            .map(|(i, (name, l))| (*name, display_unit(&format!("CC005{i}"), 2, 5, true, l)))
            .collect();
        let mut units = plug_units(dir.path(), &hellos).await;
        // (setting, what each unit is sent): 128 × 1 / 255 = 0.502 → 1,
        // 128 × 7 / 255 = 3.51 → 4, 128 × 254 / 255 = 127.498 → 127.
        let steps: [(u8, [u8; 4]); 3] = [
            (128, [0, 1, 4, 127]),
            (255, [0, 1, 7, 254]),
            (1, [0, 0, 0, 1]),
        ];
        // A unit is sent a DISPLAY when its picture changes: where the
        // scaled value stays the same, nothing new is sent.
        let mut before: Option<[u8; 4]> = None;
        for (b, expected) in steps {
            if b != 128 {
                let mut new = config.clone();
                new.display = setting(b);
                runtime.reload(new).await;
            }
            for (index, want) in expected.into_iter().enumerate() {
                if before.is_some_and(|before| before[index] == want) {
                    continue;
                }
                let what = format!("brightness {want} of {} levels at {b}", levels[index]);
                let shown = display_until(&mut units, index, &what, |s| {
                    before.is_none_or(|before| s.brightness != before[index])
                })
                .await;
                assert_eq!(shown.brightness, want, "{what}: {shown:?}");
            }
            before = Some(expected);
        }
        runtime.shutdown().await;
    });
}

/// SPEC 8.2: FIRST_FLAG goes away with its side's flag when the arbiter
/// gives that side time back; the flag that then stands fell first, and
/// keeps the mark when the corrected side's flag falls again.
#[test]
fn spec_8_2_first_flag_goes_with_the_time_given_back() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let (runtime, mut units) = one_display_board(dir.path(), "b46", "CC0056").await;

        set_times(&runtime, "b46", 100, 100).await;
        shows(&mut units, 0, "0:00.1", "0:00.1").await;
        command(&runtime, "b46", Command::Start).await;
        display_until(&mut units, 0, "White's flag", |s| has_flag(&s.left)).await;
        command(&runtime, "b46", Command::Press { side: Side::White }).await;
        display_until(&mut units, 0, "Black's flag", |s| has_flag(&s.right)).await;

        // White is given 0.3 s back: its flag and the mark go.
        let give_back = Command::Adjust {
            side: Side::White,
            remaining_ms: Some(300),
            moves: None,
            stage: None,
        };
        command(&runtime, "b46", give_back).await;
        let corrected = display_until(&mut units, 0, "White's flag withdrawn", |s| {
            !has_flag(&s.left)
        })
        .await;
        assert!(!has_first_flag(&corrected.left), "{corrected:?}");
        assert!(
            has_flag(&corrected.right) && has_first_flag(&corrected.right),
            "Black's flag, still down, is now the first: {corrected:?}"
        );

        // Black moves: White's clock runs out again, second this time.
        command(&runtime, "b46", Command::Press { side: Side::Black }).await;
        let fallen =
            display_until(&mut units, 0, "White's second flag", |s| has_flag(&s.left)).await;
        assert!(
            has_first_flag(&fallen.right) && !has_first_flag(&fallen.left),
            "Black's flag stood first: {fallen:?}"
        );
        runtime.shutdown().await;
    });
}

/// Sends `time` to `slot`'s display, due at `due`; true when the unit
/// reads exactly that display frame next.
async fn show(
    manager: &DeviceManager,
    device: &mut FakeDevice,
    slot: &DeviceKey,
    time: &str,
    due: Due,
) -> bool {
    let state = display_state(time);
    manager.send_due(slot, DeviceCommand::Display(state), due);
    device.recv_significant(Duration::from_secs(2)).await == Some(Message::Display(state))
}

/// The links count each display frame from the instant its change was due
/// to its write: a deadline's frame and a press's frame in their own
/// counts, a frame sent without a due instant in neither, and a display
/// the unit already shows (nothing written) not at all.
#[test]
fn display_writes_are_counted_from_the_instant_they_were_due() {
    serial_test(async {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("display");
        let mut device = FakeDevice::plug(&link);
        let mut h = Harness::start(&[board("b12", None, &[&link])], &[], options(100 * MS));
        device.handshake(hello(DISPLAY, "CC0012")).await;
        assert!(matches!(
            h.next_event().await,
            DeviceEvent::Connected { .. }
        ));
        let display = key("b12", DeviceRole::Display(0));
        assert!(show(&h.manager, &mut device, &display, "5:00", Due::Unmeasured).await);
        let deadline = monotonic_now_us() - 30 * MS;
        assert!(
            show(
                &h.manager,
                &mut device,
                &display,
                "4:59",
                Due::Deadline(deadline)
            )
            .await
        );
        let arrival = monotonic_now_us() - 7 * MS;
        assert!(
            show(
                &h.manager,
                &mut device,
                &display,
                "4:58",
                Due::Press(arrival)
            )
            .await
        );
        // The same state again: the unit shows it already, nothing is
        // written, and the instant must not stay for a later frame.
        h.manager.send_due(
            &display,
            DeviceCommand::Display(display_state("4:58")),
            Due::Press(arrival),
        );
        let written_by = monotonic_now_us();
        // The unit restarts: its welcome brings the display again, written
        // without a command behind it, so counted nowhere.
        device.handshake(hello(DISPLAY, "CC0012")).await;
        assert_eq!(
            device.recv_significant(Duration::from_secs(2)).await,
            Some(Message::Display(display_state("4:58")))
        );
        let [after_deadlines, after_presses] = h.manager.display_writes();
        assert_eq!((after_deadlines.count(), after_presses.count()), (1, 1));
        assert!((30 * MS..written_by - deadline).contains(&after_deadlines.max_us()));
        assert!((7 * MS..written_by - arrival).contains(&after_presses.max_us()));
    });
}
