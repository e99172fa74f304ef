//! The floor: a bare PTY round trip (16 bytes written on the master, echoed
//! by a thread on the raw slave, read back), measured in the same run as
//! the daemon so the ratio compares like with like on a shared machine.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::Instant;

use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};

/// `rounds` round-trip times, in milliseconds.
pub fn pty_round_trips(rounds: usize) -> std::io::Result<Vec<f64>> {
    let pair = nix::pty::openpty(None, None).map_err(std::io::Error::from)?;
    let mut termios = tcgetattr(pair.slave.as_fd()).map_err(std::io::Error::from)?;
    cfmakeraw(&mut termios);
    tcsetattr(pair.slave.as_fd(), SetArg::TCSANOW, &termios).map_err(std::io::Error::from)?;
    let mut master = std::fs::File::from(pair.master);
    let mut slave = std::fs::File::from(pair.slave);
    let echo = std::thread::Builder::new()
        .name("pty-echo".into())
        .spawn(move || {
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
    let frame = [0x5au8; 16];
    let mut back = [0u8; 16];
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        master.write_all(&frame)?;
        let mut got = 0;
        while got < back.len() {
            match master.read(&mut back[got..])? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => got += n,
            }
        }
        times.push(start.elapsed().as_secs_f64() * 1e3);
        // A little gap, as between presses: a hot loop would measure a
        // path no press ever takes.
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    // Closing the master hangs the slave up; the echo thread ends.
    drop(master);
    let _ = echo.join();
    Ok(times)
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips_are_measured_and_positive() {
        let times = super::pty_round_trips(20).unwrap();
        assert_eq!(times.len(), 20);
        assert!(times.iter().all(|t| *t > 0.0 && *t < 1000.0));
    }
}
