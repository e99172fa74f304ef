//! The interactive terminal: draws [`super::view::render`]'s grid with
//! crossterm and turns keys into button presses and plug toggles. Keys:
//! `a`/`z`/left shift = left, `l`/`m`/right shift = right (shift keys alone
//! only on terminals with the kitty keyboard protocol), space = arbiter,
//! `u` = unplug/replug every unit, `1`..`9` = unplug/replug that unit,
//! `q`/Esc/Ctrl-C = quit; with a [`BoardHost`] (`chessclockd --demo`) also
//! `r` = resume the clocks and `n` = a new game. The terminal is restored
//! on every exit path.
//!
//! The view also ends, within [`STEP`] (40 ms), when its terminal goes away
//! (hung up, closed: nothing is read or drawn any more) and when the host's
//! `stop()` comes true (`chessclock-sim` makes SIGTERM, SIGINT and SIGHUP
//! do that), also while it waits for the terminal's answer at the start
//! (`crate::tty`).

use std::io::{self, Write};
use std::time::Duration;

use chessclock_protocol::Button;
use crossterm::event::{
    self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, KeyboardEnhancementFlags,
    ModifierKeyCode, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::style::{
    Attribute, Color, Print, ResetColor, SetAttribute, SetBackgroundColor, SetForegroundColor,
};
use crossterm::{cursor, queue, terminal};

use super::script::Script;
use super::tty::{KeyInput, Ready, STEP};
use super::view::{render, BoardPanel, Canvas, Tone, ViewStatus};
use super::{ScriptRun, SimHandle, SimUnits};
use chessclock_host::clock::monotonic_now_us;

/// What a key does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyAction {
    Press(Button),
    ToggleAll,
    /// Toggle the n-th unit (0-based).
    Toggle(usize),
    /// Resume the clocks (the demo's board).
    Resume,
    /// A new game (the demo's board).
    NewGame,
    Quit,
    Nothing,
}

/// The key map (pure, so it is tested).
pub fn key_action(key: &KeyEvent) -> KeyAction {
    if key.kind == KeyEventKind::Release {
        return KeyAction::Nothing;
    }
    if key.kind == KeyEventKind::Repeat {
        // Holding a key is not pressing it again.
        return KeyAction::Nothing;
    }
    match key.code {
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => KeyAction::Quit,
        KeyCode::Char('a' | 'z' | 'A' | 'Z') => KeyAction::Press(Button::Left),
        KeyCode::Char('l' | 'm' | 'L' | 'M') => KeyAction::Press(Button::Right),
        KeyCode::Char(' ') => KeyAction::Press(Button::Arbiter),
        KeyCode::Modifier(ModifierKeyCode::LeftShift) => KeyAction::Press(Button::Left),
        KeyCode::Modifier(ModifierKeyCode::RightShift) => KeyAction::Press(Button::Right),
        KeyCode::Char('u' | 'U') => KeyAction::ToggleAll,
        KeyCode::Char('r' | 'R') => KeyAction::Resume,
        KeyCode::Char('n' | 'N') => KeyAction::NewGame,
        KeyCode::Char(digit @ '1'..='9') => KeyAction::Toggle(digit as usize - '1' as usize),
        KeyCode::Char('q' | 'Q') | KeyCode::Esc => KeyAction::Quit,
        _ => KeyAction::Nothing,
    }
}

/// How long the terminal may take to say whether it speaks the kitty
/// keyboard protocol (crossterm's own wait).
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

struct TerminalGuard {
    enhanced: bool,
}

impl TerminalGuard {
    /// Raw mode, the alternate screen, and the kitty keyboard protocol when
    /// the terminal has it. Returns at once when `stop()` comes true or the
    /// terminal goes away meanwhile (the loop then ends at its first turn).
    fn enter(input: &KeyInput, stop: &dyn Fn() -> bool) -> io::Result<TerminalGuard> {
        terminal::enable_raw_mode()?;
        let mut guard = TerminalGuard { enhanced: false };
        let mut out = io::stdout();
        queue!(
            out,
            terminal::EnterAlternateScreen,
            cursor::Hide,
            terminal::Clear(terminal::ClearType::All)
        )?;
        let enhanced = matches!(
            input.kitty_keyboard(&mut out, QUERY_TIMEOUT, stop),
            Ok(Some(true))
        );
        if enhanced {
            queue!(
                out,
                PushKeyboardEnhancementFlags(
                    KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES
                        | KeyboardEnhancementFlags::REPORT_EVENT_TYPES
                        | KeyboardEnhancementFlags::REPORT_ALL_KEYS_AS_ESCAPE_CODES
                )
            )?;
            guard.enhanced = true;
        }
        out.flush()?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let mut out = io::stdout();
        if self.enhanced {
            let _ = queue!(out, PopKeyboardEnhancementFlags);
        }
        let _ = queue!(
            out,
            ResetColor,
            cursor::Show,
            terminal::LeaveAlternateScreen
        );
        let _ = out.flush();
        let _ = terminal::disable_raw_mode();
    }
}

/// Takes the terminal out of raw mode without writing to it, for a host
/// program that must leave while the view is stuck writing (a terminal
/// nobody reads): the rest of the restoring needs a write.
pub fn leave_raw_mode() {
    let _ = terminal::disable_raw_mode();
}

fn tone_style(out: &mut impl Write, tone: Tone) -> io::Result<()> {
    queue!(out, SetAttribute(Attribute::Reset), ResetColor)?;
    match tone {
        Tone::Normal => {}
        Tone::Dim => queue!(out, SetForegroundColor(Color::DarkGrey))?,
        Tone::Led => queue!(
            out,
            SetForegroundColor(Color::Red),
            SetAttribute(Attribute::Bold)
        )?,
        Tone::LedIdle => queue!(out, SetForegroundColor(Color::DarkRed))?,
        Tone::Good => queue!(
            out,
            SetForegroundColor(Color::Green),
            SetAttribute(Attribute::Bold)
        )?,
        Tone::Warn => queue!(out, SetForegroundColor(Color::Yellow))?,
        Tone::Bad => queue!(
            out,
            SetForegroundColor(Color::Red),
            SetAttribute(Attribute::Bold)
        )?,
        Tone::Title => queue!(out, SetForegroundColor(Color::Cyan))?,
        Tone::Bar => queue!(
            out,
            SetForegroundColor(Color::Black),
            SetBackgroundColor(Color::Grey)
        )?,
    }
    Ok(())
}

/// Draws the rows of `canvas` that differ from `previous`.
fn draw(out: &mut impl Write, canvas: &Canvas, previous: Option<&Canvas>) -> io::Result<()> {
    let width = usize::from(canvas.width);
    let same_size = previous.is_some_and(|p| p.width == canvas.width && p.height == canvas.height);
    if !same_size {
        queue!(out, ResetColor, terminal::Clear(terminal::ClearType::All))?;
    }
    for (y, row) in canvas.cells.chunks(width.max(1)).enumerate() {
        if same_size {
            if let Some(previous) = previous {
                if previous.cells[y * width..(y + 1) * width] == *row {
                    continue;
                }
            }
        }
        queue!(out, cursor::MoveTo(0, y as u16))?;
        let mut start = 0;
        while start < row.len() {
            let tone = row[start].tone;
            let end = row[start..]
                .iter()
                .position(|c| c.tone != tone)
                .map_or(row.len(), |n| start + n);
            tone_style(out, tone)?;
            let text: String = row[start..end].iter().map(|c| c.ch).collect();
            queue!(out, Print(text))?;
            start = end;
        }
    }
    queue!(out, SetAttribute(Attribute::Reset), ResetColor)?;
    out.flush()
}

/// The terminal view for `units`, until the user quits. Blocks the calling
/// thread; the units are shut down on return.
pub fn run_interactive(units: SimUnits) -> io::Result<()> {
    run_interactive_with(units, None)
}

/// [`run_interactive`], also returning (and restoring the terminal) as soon
/// as `stop()` is true; it is asked about every 40 ms. For a host program
/// that must end the view on its own shutdown (e.g. a signal).
pub fn run_interactive_until(units: SimUnits, stop: impl Fn() -> bool) -> io::Result<()> {
    run_interactive_full(units, None, &stop)
}

/// [`run_interactive`], running `script` alongside (its progress shows in
/// the title bar).
pub fn run_interactive_with(units: SimUnits, script: Option<Script>) -> io::Result<()> {
    run_interactive_full(units, script, &|| false)
}

/// The board behind the units, when the view runs inside the daemon
/// (`chessclockd --demo`): its panel, and the keys `r` and `n`.
pub trait BoardHost {
    /// What to show of the board now (`None` while it is not known yet).
    fn panel(&self) -> Option<BoardPanel>;
    /// `r`: resume the clocks; the message to show.
    fn resume(&self) -> String;
    /// `n`: a new game; the message to show.
    fn new_game(&self) -> String;
}

/// The demo's view: the units with the board's panel above them, until the
/// user quits or `stop()` is true.
pub fn run_demo(units: SimUnits, host: &dyn BoardHost, stop: &dyn Fn() -> bool) -> io::Result<()> {
    let handle = units.handle();
    let result = KeyInput::open().and_then(|input| {
        let _guard = TerminalGuard::enter(&input, stop)?;
        event_loop(&handle, &input, None, stop, Some(host))
    });
    units.shutdown();
    result
}

/// The general form: `script` alongside, and `stop` as in
/// [`run_interactive_until`].
pub fn run_interactive_full(
    units: SimUnits,
    script: Option<Script>,
    stop: &dyn Fn() -> bool,
) -> io::Result<()> {
    let handle = units.handle();
    let script_run = match script {
        Some(script) => Some(
            handle
                .spawn_script(script)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?,
        ),
        None => None,
    };
    let result = KeyInput::open().and_then(|input| {
        let _guard = TerminalGuard::enter(&input, stop)?;
        event_loop(&handle, &input, script_run.as_ref(), stop, None)
    });
    units.shutdown();
    result
}

/// Draws and reads keys until the user quits, `stop()` comes true or the
/// terminal goes away (all three end the view without an error).
fn event_loop(
    handle: &SimHandle,
    input: &KeyInput,
    script: Option<&ScriptRun>,
    stop: &dyn Fn() -> bool,
    host: Option<&dyn BoardHost>,
) -> io::Result<()> {
    let mut out = io::BufWriter::new(io::stdout());
    let mut previous: Option<Canvas> = None;
    let names = handle.unit_names();
    let mut status = ViewStatus {
        message: format!("simulating {}: press keys to play", names.join(", ")),
        origin_us: handle.started_us(),
        ..ViewStatus::default()
    };
    loop {
        if stop() {
            return Ok(());
        }
        status.now_us = monotonic_now_us();
        status.script = script.map(|s| s.progress.borrow().clone());
        status.board = host.and_then(BoardHost::panel);
        let drawn = terminal::size().and_then(|(width, height)| {
            let canvas = render(&handle.snapshots(), &status, width, height);
            if previous.as_ref() != Some(&canvas) {
                draw(&mut out, &canvas, previous.as_ref())?;
                previous = Some(canvas);
            }
            Ok(())
        });
        if let Err(error) = drawn {
            // a terminal that went away is the end of the view, not a fault
            return if input.gone() { Ok(()) } else { Err(error) };
        }
        match input.wait(STEP)? {
            Ready::Gone => return Ok(()),
            Ready::Idle => continue,
            Ready::Input => {}
        }
        // crossterm parses what arrived; it is never left to wait itself
        while event::poll(Duration::ZERO)? {
            if let Event::Key(key) = event::read()? {
                if on_key(handle, host, &names, &mut status, &key) == KeyAction::Quit {
                    return Ok(());
                }
            }
        }
    }
}

/// Does what `key` asks (the status line says what happened) and returns
/// its action.
fn on_key(
    handle: &SimHandle,
    host: Option<&dyn BoardHost>,
    names: &[String],
    status: &mut ViewStatus,
    key: &KeyEvent,
) -> KeyAction {
    let action = key_action(key);
    match action {
        KeyAction::Quit | KeyAction::Nothing => {}
        KeyAction::Resume => {
            status.message = host.map_or_else(
                || "r resumes the clocks only in chessclockd --demo".to_owned(),
                BoardHost::resume,
            );
        }
        KeyAction::NewGame => {
            status.message = host.map_or_else(
                || "n starts a new game only in chessclockd --demo".to_owned(),
                BoardHost::new_game,
            );
        }
        KeyAction::Press(button) => {
            status.message = match handle.press(None, button) {
                Ok(()) => format!("{} pressed", super::log::button_name(button)),
                Err(error) => error.to_string(),
            };
        }
        KeyAction::ToggleAll => {
            let plugged = handle.snapshots().iter().any(|s| s.plugged);
            for name in names {
                let _ = if plugged {
                    handle.unplug(name, None)
                } else {
                    handle.replug(name)
                };
            }
            status.message = if plugged {
                "all units unplugged"
            } else {
                "all units replugged"
            }
            .into();
        }
        KeyAction::Toggle(index) => {
            status.message = match names.get(index) {
                Some(name) => match handle.toggle_plug(name) {
                    Ok(()) => format!("{name}: cable toggled"),
                    Err(error) => error.to_string(),
                },
                None => format!("no unit {}", index + 1),
            };
        }
    }
    action
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventState;

    fn key(code: KeyCode, kind: KeyEventKind) -> KeyEvent {
        KeyEvent {
            code,
            modifiers: KeyModifiers::NONE,
            kind,
            state: KeyEventState::NONE,
        }
    }

    #[test]
    fn keys_map_to_buttons_and_only_on_press() {
        let press = |code| key_action(&key(code, KeyEventKind::Press));
        assert_eq!(press(KeyCode::Char('a')), KeyAction::Press(Button::Left));
        assert_eq!(press(KeyCode::Char('z')), KeyAction::Press(Button::Left));
        assert_eq!(
            press(KeyCode::Modifier(ModifierKeyCode::LeftShift)),
            KeyAction::Press(Button::Left)
        );
        assert_eq!(press(KeyCode::Char('m')), KeyAction::Press(Button::Right));
        assert_eq!(
            press(KeyCode::Modifier(ModifierKeyCode::RightShift)),
            KeyAction::Press(Button::Right)
        );
        assert_eq!(press(KeyCode::Char(' ')), KeyAction::Press(Button::Arbiter));
        assert_eq!(press(KeyCode::Char('u')), KeyAction::ToggleAll);
        assert_eq!(press(KeyCode::Char('r')), KeyAction::Resume);
        assert_eq!(press(KeyCode::Char('n')), KeyAction::NewGame);
        assert_eq!(press(KeyCode::Char('2')), KeyAction::Toggle(1));
        assert_eq!(press(KeyCode::Char('q')), KeyAction::Quit);
        assert_eq!(press(KeyCode::Char('x')), KeyAction::Nothing);
        assert_eq!(
            key_action(&key(KeyCode::Char('a'), KeyEventKind::Release)),
            KeyAction::Nothing
        );
        assert_eq!(
            key_action(&key(KeyCode::Char('a'), KeyEventKind::Repeat)),
            KeyAction::Nothing
        );
        let ctrl_c = KeyEvent {
            modifiers: KeyModifiers::CONTROL,
            ..key(KeyCode::Char('c'), KeyEventKind::Press)
        };
        assert_eq!(key_action(&ctrl_c), KeyAction::Quit);
    }
}
