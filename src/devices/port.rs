//! A serial port as a device link reads and writes it: non-blocking, on the
//! current tokio runtime's reactor, opened exclusively at 115200 8N1.
//!
//! Input waiting at the open is kept (SPEC.md 6.1 item 4): it is the HELLO a
//! replugged device sent while the host was still opening the port (a PTY
//! keeps what the device side wrote; the PTY's own echo goes back to the
//! device side, never into this input, once the slave is raw). Throwing it
//! away made every replug wait for the device's next HELLO, 500 ms later,
//! and a cable flapping faster than that never linked.
//!
//! Why not `tokio_serial::SerialStream`'s `AsyncRead`: after every read that
//! returned data it reads again to learn that the port is empty, and on a
//! tty that empty read waits for the kernel's pending buffer work. A read
//! that filled less than the buffer has already drained the port, so here it
//! clears the readiness instead (tokio ignores the clear if new data was
//! signalled meanwhile, so nothing is missed): one `read` per arrival.

use std::io::{self, Read, Write};

use tokio::io::unix::AsyncFd;

pub(super) struct Port {
    fd: AsyncFd<mio_serial::SerialStream>,
}

impl Port {
    /// Opens `path` (symlinks followed) exclusively, raw at 115200 8N1,
    /// keeping whatever arrived before the open (see the module docs;
    /// [`Port::read_waiting`] takes it). The `open` and the line
    /// set-up run on tokio's blocking pool: on a real USB tty they can take
    /// milliseconds, and this task shares the timing thread, whose deadlines
    /// must not wait for them. Must be called inside a tokio runtime with
    /// I/O enabled.
    pub async fn open(path: &std::path::Path) -> Result<Port, tokio_serial::Error> {
        let path = path.to_owned();
        let opened = tokio::task::spawn_blocking(move || {
            let builder = tokio_serial::new(path.to_string_lossy(), 115_200);
            let mut stream = mio_serial::SerialStream::open(&builder)?;
            stream.set_exclusive(true)?;
            Ok::<_, tokio_serial::Error>(stream)
        })
        .await;
        let stream = match opened {
            Ok(result) => result?,
            Err(error) => {
                return Err(tokio_serial::Error::new(
                    tokio_serial::ErrorKind::Unknown,
                    format!("the port could not be opened: {error}"),
                ))
            }
        };
        // `AsyncFd::new` is deprecated because a wrapped value could hand
        // out a different or closed descriptor over time; a
        // `mio_serial::SerialStream` owns its descriptor and always returns
        // that one, the condition under which registering it is sound.
        #[allow(deprecated)]
        let fd = AsyncFd::new(stream)?;
        Ok(Port { fd })
    }

    /// Reads what the port holds (at least one byte; 0 means end of file).
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.fd.readable().await?;
            match guard.try_io(|inner| (&mut inner.get_ref()).read(buf)) {
                Ok(Ok(n)) => {
                    if n > 0 && n < buf.len() {
                        guard.clear_ready();
                    }
                    return Ok(n);
                }
                Ok(Err(error)) => return Err(error),
                Err(_would_block) => continue,
            }
        }
    }

    /// Reads what the port holds right now without waiting (the input that
    /// was waiting at the open): `Ok(0)` when nothing is there.
    pub fn read_waiting(&self, buf: &mut [u8]) -> io::Result<usize> {
        match (&mut self.fd.get_ref()).read(buf) {
            Ok(n) => Ok(n),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(error) => Err(error),
        }
    }

    /// Writes all of `bytes`, waiting for room as needed.
    pub async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let mut guard = self.fd.writable().await?;
            match guard.try_io(|inner| (&mut inner.get_ref()).write(bytes)) {
                Ok(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(Ok(n)) => bytes = &bytes[n..],
                Ok(Err(error)) => return Err(error),
                Err(_would_block) => continue,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};

    #[tokio::test(flavor = "current_thread")]
    async fn reads_each_arrival_once_and_writes_through_a_pty() {
        let pair = nix::pty::openpty(None, None).unwrap();
        let mut termios = tcgetattr(pair.slave.as_fd()).unwrap();
        cfmakeraw(&mut termios);
        tcsetattr(pair.slave.as_fd(), SetArg::TCSANOW, &termios).unwrap();
        let slave_path = nix::unistd::ttyname(pair.slave.as_fd()).unwrap();
        let port = Port::open(&slave_path).await.unwrap();
        let mut master = std::fs::File::from(pair.master);

        let mut buf = [0u8; 64];
        for round in 0..3u8 {
            master.write_all(&[round, 1, 2, 3]).unwrap();
            let n = tokio::time::timeout(std::time::Duration::from_secs(5), port.read(&mut buf))
                .await
                .expect("the bytes written arrive")
                .unwrap();
            assert_eq!(&buf[..n], &[round, 1, 2, 3]);
        }
        // Readiness was cleared after the short read: nothing more is
        // reported until more arrives.
        let idle =
            tokio::time::timeout(std::time::Duration::from_millis(50), port.read(&mut buf)).await;
        assert!(idle.is_err(), "a read returned with nothing written");

        port.write_all(b"hello").await.unwrap();
        let mut back = [0u8; 5];
        master.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"hello");
    }

    /// SPEC 6.1 item 4: what the device wrote before the open is kept.
    #[tokio::test(flavor = "current_thread")]
    async fn spec_6_1_input_written_before_the_open_is_kept() {
        let pair = nix::pty::openpty(None, None).unwrap();
        let mut termios = tcgetattr(pair.slave.as_fd()).unwrap();
        cfmakeraw(&mut termios);
        tcsetattr(pair.slave.as_fd(), SetArg::TCSANOW, &termios).unwrap();
        let slave_path = nix::unistd::ttyname(pair.slave.as_fd()).unwrap();
        let mut master = std::fs::File::from(pair.master);
        master.write_all(&[0, 7, 7, 7, 0]).unwrap();
        let port = Port::open(&slave_path).await.unwrap();
        let mut buf = [0u8; 64];
        let mut got = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while got.len() < 5 && std::time::Instant::now() < deadline {
            let n = port.read_waiting(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
            if n == 0 {
                tokio::task::yield_now().await;
            }
        }
        assert_eq!(got, [0, 7, 7, 7, 0]);
        assert_eq!(
            port.read_waiting(&mut buf).unwrap(),
            0,
            "nothing more waits"
        );
    }
}
