//! The floor: a bare PTY round trip (16 bytes written on the master, echoed
//! by a thread on the raw slave, read back), measured in the same run as
//! the daemon so the ratio compares like with like on a shared machine.
//!
//! Two floors: [`pty_round_trips`] runs them back to back (0.5 ms apart),
//! which keeps the CPUs awake and measures the quickest a PTY ever is;
//! [`PacedFloor`] runs them at the presses' own spacing (200-600 ms apart)
//! *during* the steady game, so each round trip starts, like each press,
//! from an idle machine. On a virtual machine waking an idle CPU costs more
//! than the whole hot round trip, so only the paced floor compares a press
//! with the same path under the same conditions. Both are reported.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::Instant;

use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};

use super::placement::Placement;

/// A PTY pair with an echo thread on its raw slave.
struct Echo {
    master: std::fs::File,
    thread: std::thread::JoinHandle<()>,
}

impl Echo {
    /// `echo_on`: the CPUs the echo runs on (the daemon's, see
    /// [`Placement`]).
    fn start(echo_on: Option<Placement>) -> std::io::Result<Echo> {
        let pair = nix::pty::openpty(None, None).map_err(std::io::Error::from)?;
        let mut termios = tcgetattr(pair.slave.as_fd()).map_err(std::io::Error::from)?;
        cfmakeraw(&mut termios);
        tcsetattr(pair.slave.as_fd(), SetArg::TCSANOW, &termios).map_err(std::io::Error::from)?;
        let master = std::fs::File::from(pair.master);
        let mut slave = std::fs::File::from(pair.slave);
        let thread = std::thread::Builder::new()
            .name("pty-echo".into())
            .spawn(move || {
                if let Some(placement) = echo_on {
                    if let Err(error) = placement.enter_daemon() {
                        eprintln!("chessclock-bench: the floor's echo stays unpinned: {error}");
                    }
                }
                let mut buf = [0u8; 64];
                loop {
                    match slave.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if slave.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                    }
                }
            })?;
        Ok(Echo { master, thread })
    }

    /// One round trip, ms.
    fn round_trip(&mut self) -> std::io::Result<f64> {
        let frame = [0x5au8; 16];
        let mut back = [0u8; 16];
        let start = Instant::now();
        self.master.write_all(&frame)?;
        let mut got = 0;
        while got < back.len() {
            match self.master.read(&mut back[got..])? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => got += n,
            }
        }
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }

    fn stop(self) {
        // Closing the master hangs the slave up; the echo thread ends.
        drop(self.master);
        let _ = self.thread.join();
    }
}

/// `rounds` round-trip times, in milliseconds, 0.5 ms apart.
pub fn pty_round_trips(rounds: usize, echo_on: Option<Placement>) -> std::io::Result<Vec<f64>> {
    let mut echo = Echo::start(echo_on)?;
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        times.push(echo.round_trip()?);
        // A little gap: a loop with none would measure a path no press
        // ever takes.
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    echo.stop();
    Ok(times)
}

/// Round trips at press spacing on a thread of their own, until stopped.
pub struct PacedFloor {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<std::io::Result<Vec<f64>>>,
}

impl PacedFloor {
    /// Starts round trips `gap_ms` apart (uniform, ms).
    pub fn start(
        gap_ms: (u64, u64),
        seed: u64,
        echo_on: Option<Placement>,
    ) -> std::io::Result<PacedFloor> {
        use rand::{Rng, SeedableRng};
        let mut echo = Echo::start(echo_on)?;
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("pty-floor".into())
            .spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                let mut times = Vec::new();
                loop {
                    let gap = rng.random_range(gap_ms.0..=gap_ms.1.max(gap_ms.0));
                    match stopped.recv_timeout(std::time::Duration::from_millis(gap)) {
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                        _ => break,
                    }
                    times.push(echo.round_trip()?);
                }
                echo.stop();
                Ok(times)
            })?;
        Ok(PacedFloor { stop, thread })
    }

    /// Stops and returns every round trip, ms.
    pub fn finish(self) -> std::io::Result<Vec<f64>> {
        let _ = self.stop.send(());
        self.thread
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the floor thread panicked")))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips_are_measured_and_positive() {
        let times = super::pty_round_trips(20, None).unwrap();
        assert_eq!(times.len(), 20);
        assert!(times.iter().all(|t| *t > 0.0 && *t < 1000.0));
    }

    #[test]
    fn paced_round_trips_are_taken_until_stopped() {
        let started = std::time::Instant::now();
        let floor = super::PacedFloor::start((5, 10), 7, None).unwrap();
        // Let it take a few round trips: the thread runs until stopped.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let times = floor.finish().unwrap();
        // At least one round trip, and no more than 5 ms gaps allow in the
        // time that really passed (however long the sleep overran).
        let fit = started.elapsed().as_millis() / 5;
        assert!(
            !times.is_empty() && times.len() as u128 <= fit,
            "{} round trips, at most {fit} fit",
            times.len()
        );
        assert!(times.iter().all(|t| *t > 0.0 && *t < 1000.0));
    }
}
