//! The firmware on the host: the same [`Unit`], debouncer, render and chip
//! drivers as on the RP2040, with a PTY instead of USB, `CLOCK_MONOTONIC`
//! instead of the RP2040 timer and fake hardware: levers whose edges are
//! scheduled at exact instants (bounces included), and TM1637 / MAX7219
//! [models](crate::drivers::model) that decode what the drivers send, so a
//! test reads the digits a person would see.
//!
//! What it promises:
//! * each [`HostUnit`] is one thread owning its unit, PTY and chips (no
//!   shared state but a mutex-guarded command queue and [`Snapshot`]);
//! * the daemon opens the PTY through a stable symlink ([`HostUnitSpec::link`]),
//!   re-pointed on every replug and removed on unplug and on drop;
//! * the device clock is `CLOCK_MONOTONIC` minus the instant of the unit's
//!   power-up (so it starts near 0 like the RP2040 timer); a lever edge
//!   scheduled at monotonic instant `t` is handed to the debouncer stamped
//!   `t` (the firmware's interrupt reads the timer at the edge), whenever
//!   the thread gets to it;
//! * unplug closes the PTY (the host's reads fail, as on a USB unplug) while
//!   the unit keeps running on its own power: presses are queued and sent
//!   after the replug; a power cycle is a new [`Unit`] with a new `boot_id`,
//!   a clock from 0 and an empty queue.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use std::cell::RefCell;
use std::rc::Rc;

use chessclock_protocol::device::LinkStats;
use chessclock_protocol::Button;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{PollFd, PollFlags};
use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};
use nix::sys::time::TimeSpec;

use crate::config::{serial_from_unique_id, DisplayChip, Identity, UnitConfig};
use crate::debounce::Buttons;
use crate::drivers::max7219::Max7219;
use crate::drivers::model::{Chip, ChipLine, Max7219Chain, NoDelay, Tm1637Chip, Wire};
use crate::drivers::tm1637::Tm1637;
use crate::render::read_back;
use crate::unit::{Outputs, Unit, TX_BUFFER};

/// CLOCK_MONOTONIC, µs (the daemon's clock too).
pub fn monotonic_us() -> i64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .unwrap_or_else(|_| TimeSpec::new(0, 0));
    t.tv_sec() * 1_000_000 + t.tv_nsec() / 1_000
}

/// One unit to run.
#[derive(Clone, Debug)]
pub struct HostUnitSpec {
    pub config: UnitConfig,
    pub vendor: String,
    pub model: String,
    /// The fake flash chip's unique id: the serial is its hex.
    pub flash_uid: [u8; 8],
    pub firmware: String,
    /// The stable path the daemon's config names.
    pub link: PathBuf,
    pub boot_id: u32,
}

impl HostUnitSpec {
    pub fn new(config: UnitConfig, link: PathBuf, flash_uid: [u8; 8], boot_id: u32) -> Self {
        HostUnitSpec {
            config,
            vendor: "chessclockd".to_owned(),
            model: format!("host-{}", config.kind.role_name()),
            flash_uid,
            firmware: env!("CARGO_PKG_VERSION").to_owned(),
            link,
            boot_id,
        }
    }

    pub fn identity(&self) -> Identity {
        Identity::new(
            &self.vendor,
            &self.model,
            serial_from_unique_id(&self.flash_uid).as_str(),
            &self.firmware,
        )
    }
}

/// What the unit shows and where its link is, as of its last pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub plugged: bool,
    /// LINKED (WELCOME received, host heard within T).
    pub linked: bool,
    pub boot_id: u32,
    /// CLOCK_MONOTONIC µs of the unit's power-up (device time 0).
    pub boot_monotonic_us: i64,
    /// Each panel as decoded from its chip model, e.g. `4:59`.
    pub panels: Vec<String>,
    /// What the logic asked the hardware to show.
    pub outputs: Option<Outputs>,
    /// Button events waiting for their ACK.
    pub unacked: usize,
    /// Event number the next press gets.
    pub next_event: u16,
    pub stats: LinkStats,
    /// Display updates the chips saw.
    pub chip_updates: u64,
}

enum Command {
    /// Level changes of button `index`: (monotonic µs, pressed).
    Edges(usize, Vec<(i64, bool)>),
    Unplug,
    Replug,
    PowerCycle {
        boot_id: u32,
    },
    Mute(bool),
    LowPower(bool),
}

struct State {
    commands: VecDeque<Command>,
    snapshot: Snapshot,
    stop: bool,
    error: Option<String>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    /// Written to wake the unit's thread from its poll.
    wake: OwnedFd,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running host unit. Dropping it stops the thread and removes the link.
pub struct HostUnit {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    spec: HostUnitSpec,
}

/// Time from scheduling a press to its first edge: the unit's thread is then
/// surely waiting for it, so every edge is handled at its own instant.
pub const PRESS_LEAD_US: i64 = 2_000;

impl HostUnit {
    /// Plugs the unit in (opens its PTY, points the link) and powers it up.
    pub fn start(spec: HostUnitSpec) -> io::Result<HostUnit> {
        let (wake_r, wake_w) = nix::unistd::pipe().map_err(io::Error::from)?;
        for fd in [&wake_r, &wake_w] {
            set_nonblocking(fd)?;
        }
        let pty = Pty::open(&spec.link)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                commands: VecDeque::new(),
                snapshot: Snapshot::default(),
                stop: false,
                error: None,
            }),
            changed: Condvar::new(),
            wake: wake_w,
        });
        let thread = {
            let shared = shared.clone();
            let spec = spec.clone();
            std::thread::Builder::new()
                .name(format!("unit-{}", spec.config.kind.role_name()))
                .spawn(move || Runner::new(spec, shared.clone(), wake_r, pty).run())?
        };
        let unit = HostUnit {
            shared,
            thread: Some(thread),
            spec,
        };
        unit.wait_until(Duration::from_secs(5), |s| s.plugged)
            .map_err(io::Error::other)?;
        Ok(unit)
    }

    pub fn spec(&self) -> &HostUnitSpec {
        &self.spec
    }

    fn send(&self, command: Command) {
        self.shared.lock().commands.push_back(command);
        let _ = nix::unistd::write(&self.shared.wake, &[1]);
    }

    /// A lever press with contact bounce, its first edge [`PRESS_LEAD_US`]
    /// from now; released (bouncing too) 80 ms later. Returns the first
    /// edge's CLOCK_MONOTONIC instant: the press's true instant.
    pub fn press(&self, button: Button) -> i64 {
        let t = monotonic_us() + PRESS_LEAD_US;
        let edges = vec![
            (t, true),
            (t + 250, false),
            (t + 600, true),
            (t + 900, false),
            (t + 1_400, true),
            (t + 80_000, false),
            (t + 80_300, true),
            (t + 80_700, false),
        ];
        self.send(Command::Edges(index(button), edges));
        t
    }

    /// A 1 ms spike on the line (noise, a touch): no press.
    pub fn glitch(&self, button: Button) -> i64 {
        let t = monotonic_us() + PRESS_LEAD_US;
        self.send(Command::Edges(
            index(button),
            vec![
                (t, true),
                (t + 400, false),
                (t + 700, true),
                (t + 1_000, false),
            ],
        ));
        t
    }

    /// Pulls the USB cable (the unit keeps running on its own power).
    pub fn unplug(&self) {
        self.send(Command::Unplug);
    }

    pub fn replug(&self) {
        self.send(Command::Replug);
    }

    /// Power off and on: a new boot, plugged in again.
    pub fn power_cycle(&self, boot_id: u32) {
        self.send(Command::PowerCycle { boot_id });
    }

    /// The alarm switch.
    pub fn mute(&self, muted: bool) {
        self.send(Command::Mute(muted));
    }

    pub fn low_power(&self, low: bool) {
        self.send(Command::LowPower(low));
    }

    pub fn snapshot(&self) -> Snapshot {
        self.shared.lock().snapshot.clone()
    }

    /// Blocks until `ready` holds for a snapshot, or fails after `timeout`
    /// with the last snapshot (or the thread's error).
    pub fn wait_until(
        &self,
        timeout: Duration,
        ready: impl Fn(&Snapshot) -> bool,
    ) -> Result<Snapshot, String> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if let Some(e) = &state.error {
                return Err(format!("host unit failed: {e}"));
            }
            if ready(&state.snapshot) {
                return Ok(state.snapshot.clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "condition not met within {timeout:?}; last snapshot {:?}",
                    state.snapshot
                ));
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for HostUnit {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        let _ = nix::unistd::write(&self.shared.wake, &[1]);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        remove_link(&self.spec.link);
    }
}

fn index(button: Button) -> usize {
    match button {
        Button::Left => 0,
        Button::Right => 1,
        _ => 2,
    }
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let flags = fcntl(fd.as_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}

/// A PTY standing in for the USB port: the daemon opens the slave (through
/// the link), the unit holds the master. The unit also keeps the slave open
/// so the master never hangs up while the daemon has the port closed (a
/// USB device does not notice that either).
struct Pty {
    master: OwnedFd,
    _slave: OwnedFd,
    link: PathBuf,
}

impl Pty {
    fn open(link: &Path) -> io::Result<Pty> {
        let pair = nix::pty::openpty(None, None).map_err(io::Error::from)?;
        let mut termios = tcgetattr(pair.slave.as_fd()).map_err(io::Error::from)?;
        cfmakeraw(&mut termios);
        tcsetattr(pair.slave.as_fd(), SetArg::TCSANOW, &termios).map_err(io::Error::from)?;
        set_nonblocking(&pair.master)?;
        let path = nix::unistd::ttyname(pair.slave.as_fd()).map_err(io::Error::from)?;
        point_link(link, &path)?;
        Ok(Pty {
            master: pair.master,
            _slave: pair.slave,
            link: link.to_owned(),
        })
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        remove_link(&self.link);
    }
}

/// Points the symlink `link` at `target` atomically (a new link renamed
/// over the old one).
fn point_link(link: &Path, target: &Path) -> io::Result<()> {
    if let Some(parent) = link.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let name = link
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = link.with_file_name(format!(".{name}.unit-{}", std::process::id()));
    let _ = std::fs::remove_file(&temporary);
    std::os::unix::fs::symlink(target, &temporary)?;
    std::fs::rename(&temporary, link)
}

fn remove_link(link: &Path) {
    if std::fs::symlink_metadata(link).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = std::fs::remove_file(link);
    }
}

/// A TM1637 model and the real driver wired to it.
type Tm1637Module = (Rc<RefCell<Tm1637Chip>>, Tm1637<ChipLine, ChipLine>);

/// The unit's display modules, as chip models behind the real drivers.
enum Panels {
    None,
    Tm1637(Vec<Tm1637Module>),
    Max7219(
        Rc<RefCell<Max7219Chain>>,
        Max7219<ChipLine, ChipLine, ChipLine>,
    ),
}

impl Panels {
    fn new(config: &UnitConfig) -> Panels {
        let count = config.panel_count();
        if count == 0 {
            return Panels::None;
        }
        match config.chip {
            DisplayChip::Tm1637 => Panels::Tm1637(
                (0..count)
                    .map(|_| {
                        let chip = Rc::new(RefCell::new(Tm1637Chip::new()));
                        let line = |wire| ChipLine {
                            chip: Chip::Tm1637(chip.clone()),
                            wire,
                        };
                        let driver = Tm1637::new(line(Wire::Tm1637Clk), line(Wire::Tm1637Dio));
                        (chip, driver)
                    })
                    .collect(),
            ),
            DisplayChip::Max7219 => {
                let chain = Rc::new(RefCell::new(Max7219Chain::new(count)));
                let line = |wire| ChipLine {
                    chip: Chip::Max7219(chain.clone()),
                    wire,
                };
                let driver = Max7219::new(
                    line(Wire::MaxDin),
                    line(Wire::MaxClk),
                    line(Wire::MaxCs),
                    count,
                );
                Panels::Max7219(chain, driver)
            }
        }
    }

    fn show(&mut self, out: &Outputs) {
        match self {
            Panels::None => {}
            Panels::Tm1637(modules) => {
                for ((_, driver), image) in modules.iter_mut().zip(&out.panels) {
                    driver.show(image, out.brightness, &mut NoDelay);
                }
            }
            Panels::Max7219(_, driver) => {
                let n = out.panel_count.min(out.panels.len());
                driver.show(&out.panels[..n], out.brightness, &mut NoDelay);
            }
        }
    }

    fn read(&self) -> (Vec<String>, u64) {
        match self {
            Panels::None => (Vec::new(), 0),
            Panels::Tm1637(modules) => (
                modules
                    .iter()
                    .map(|(c, _)| read_back(&c.borrow().image()).as_str().to_owned())
                    .collect(),
                modules.iter().map(|(c, _)| c.borrow().updates).sum(),
            ),
            Panels::Max7219(chain, _) => {
                let chain = chain.borrow();
                (
                    chain
                        .modules
                        .iter()
                        .map(|m| read_back(&m.image()).as_str().to_owned())
                        .collect(),
                    0,
                )
            }
        }
    }
}

/// The unit's thread.
struct Runner {
    spec: HostUnitSpec,
    shared: Arc<Shared>,
    wake: OwnedFd,
    pty: Option<Pty>,
    unit: Unit,
    boot_id: u32,
    boot_us: i64,
    buttons: Buttons,
    levels: [bool; 3],
    /// Scheduled level changes: (monotonic µs, button, pressed), sorted.
    edges: Vec<(i64, usize, bool)>,
    panels: Panels,
    last_outputs: Option<Outputs>,
    updates: u64,
}

impl Runner {
    fn new(spec: HostUnitSpec, shared: Arc<Shared>, wake: OwnedFd, pty: Pty) -> Runner {
        let boot_us = monotonic_us();
        let unit = Unit::new(spec.config, &spec.identity(), spec.boot_id, 0);
        let panels = Panels::new(&spec.config);
        let mut runner = Runner {
            boot_id: spec.boot_id,
            spec,
            shared,
            wake,
            pty: Some(pty),
            unit,
            boot_us,
            buttons: Buttons::new([false; 3]),
            levels: [false; 3],
            edges: Vec::new(),
            panels,
            last_outputs: None,
            updates: 0,
        };
        let now = runner.device_now();
        runner.unit.host_connected(now);
        runner
    }

    fn device_now(&self) -> u64 {
        (monotonic_us() - self.boot_us).max(0) as u64
    }

    fn device_time(&self, monotonic: i64) -> u64 {
        (monotonic - self.boot_us).max(0) as u64
    }

    fn run(mut self) {
        if let Err(e) = self.run_inner() {
            self.shared.lock().error = Some(e.to_string());
            self.shared.changed.notify_all();
        }
    }

    fn run_inner(&mut self) -> io::Result<()> {
        let mut buf = [0u8; 512];
        loop {
            if !self.take_commands()? {
                return Ok(());
            }
            let now = self.device_now();
            self.apply_edges(now);
            self.transmit(now);
            self.show(now);
            self.publish();
            let deadline = self.deadline(now);
            let timeout_us = deadline
                .saturating_sub(self.device_now())
                .min(3_600_000_000);
            let timeout = TimeSpec::new(
                (timeout_us / 1_000_000) as i64,
                ((timeout_us % 1_000_000) * 1_000) as i64,
            );
            let (master_ready, wake_ready) = {
                let mut fds = vec![PollFd::new(self.wake.as_fd(), PollFlags::POLLIN)];
                if let Some(pty) = &self.pty {
                    fds.push(PollFd::new(pty.master.as_fd(), PollFlags::POLLIN));
                }
                match nix::poll::ppoll(&mut fds, Some(timeout), None) {
                    Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                    Err(e) => return Err(e.into()),
                }
                let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
                (
                    fds.get(1).is_some_and(ready),
                    fds.first().is_some_and(ready),
                )
            };
            if wake_ready {
                while nix::unistd::read(&self.wake, &mut buf).is_ok_and(|n| n > 0) {}
            }
            if master_ready {
                self.read_host(&mut buf);
            }
        }
    }

    fn read_host(&mut self, buf: &mut [u8]) {
        let Some(pty) = &self.pty else { return };
        loop {
            match nix::unistd::read(&pty.master, buf) {
                Ok(0) => return,
                Ok(n) => {
                    let now = self.device_now();
                    self.unit.receive(buf.get(..n).unwrap_or(&[]), now);
                }
                Err(nix::errno::Errno::EAGAIN) => return,
                // EIO: nobody has the slave open (we always do); treat it as
                // "nothing to read".
                Err(_) => return,
            }
        }
    }

    /// Applies the queued commands; `false` when asked to stop.
    fn take_commands(&mut self) -> io::Result<bool> {
        let commands: Vec<Command> = {
            let mut state = self.shared.lock();
            if state.stop {
                return Ok(false);
            }
            state.commands.drain(..).collect()
        };
        for command in commands {
            let now = self.device_now();
            match command {
                Command::Edges(button, edges) => {
                    self.edges
                        .extend(edges.into_iter().map(|(t, level)| (t, button, level)));
                    self.edges.sort_by_key(|e| e.0);
                }
                Command::Unplug => {
                    self.pty = None;
                    self.unit.host_gone(now);
                }
                Command::Replug => {
                    if self.pty.is_none() {
                        self.pty = Some(Pty::open(&self.spec.link)?);
                        self.unit.host_connected(now);
                    }
                }
                Command::PowerCycle { boot_id } => {
                    self.pty = None;
                    self.boot_us = monotonic_us();
                    self.boot_id = boot_id;
                    self.unit = Unit::new(self.spec.config, &self.spec.identity(), boot_id, 0);
                    self.buttons = Buttons::new(self.levels);
                    self.panels = Panels::new(&self.spec.config);
                    self.last_outputs = None;
                    self.pty = Some(Pty::open(&self.spec.link)?);
                    let now = self.device_now();
                    self.unit.host_connected(now);
                }
                Command::Mute(m) => self.unit.set_muted(m),
                Command::LowPower(l) => self.unit.set_low_power(l),
            }
        }
        Ok(true)
    }

    /// Edges whose instant has come, each stamped with its own instant (the
    /// interrupt's timer read), then the debouncer's decision.
    fn apply_edges(&mut self, now: u64) {
        let now_mono = self.boot_us + now as i64;
        let due = self.edges.iter().take_while(|e| e.0 <= now_mono).count();
        let taken: Vec<(i64, usize, bool)> = self.edges.drain(..due).collect();
        for (t, button, level) in taken {
            let at = self.device_time(t);
            // Windows that closed before this edge are decided on the levels
            // before it; then the edge, as its interrupt stamps it.
            self.settle(at);
            if let Some(l) = self.levels.get_mut(button) {
                *l = level;
            }
            self.buttons.edge(button, at);
        }
        self.settle(now);
    }

    fn settle(&mut self, at: u64) {
        for event in self.buttons.sample(self.levels, at).iter() {
            let _ = self.unit.button(event);
        }
    }

    fn transmit(&mut self, now: u64) {
        let Some(pty) = &self.pty else { return };
        let mut buf = [0u8; TX_BUFFER];
        while let Some(n) = self.unit.transmit(now, &mut buf) {
            let bytes = buf.get(..n).unwrap_or(&[]);
            match nix::unistd::write(&pty.master, bytes) {
                Ok(written) if written == n => {}
                // A full PTY buffer (the daemon is not reading): the frame
                // is lost like one on a stalled USB pipe.
                Ok(_) => self.unit.transmit_failed(),
                Err(_) => {}
            }
        }
    }

    fn show(&mut self, now: u64) {
        let out = self.unit.outputs(now);
        if self.last_outputs != Some(out) {
            let panels_changed = self
                .last_outputs
                .is_none_or(|l| l.panels != out.panels || l.brightness != out.brightness);
            if panels_changed {
                self.panels.show(&out);
                self.updates += 1;
            }
            self.last_outputs = Some(out);
        }
    }

    fn deadline(&self, now: u64) -> u64 {
        let mut t = self.unit.next_deadline(now);
        if let Some(b) = self.buttons.deadline() {
            t = t.min(b);
        }
        if let Some(e) = self.edges.first() {
            t = t.min(self.device_time(e.0));
        }
        t.max(now)
    }

    fn publish(&self) {
        let (panels, chip_updates) = self.panels.read();
        let link = self.unit.link();
        let snapshot = Snapshot {
            plugged: self.pty.is_some(),
            linked: !link.link_lost(),
            boot_id: self.boot_id,
            boot_monotonic_us: self.boot_us,
            panels,
            outputs: self.last_outputs,
            unacked: link.pending().count(),
            next_event: link
                .hello()
                .first_unacked_event
                .wrapping_add(link.pending().count() as u16),
            stats: link.stats(),
            chip_updates: chip_updates.max(self.updates),
        };
        let mut state = self.shared.lock();
        if state.snapshot != snapshot {
            state.snapshot = snapshot;
            self.shared.changed.notify_all();
        }
    }
}
