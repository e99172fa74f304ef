//! The hub's connections: how many it keeps, how long it waits for them,
//! and which it drops first when it has no room (issue 29 item 5).
//!
//! Promises:
//! * at most [`Limits::max_connections`] connections are open at once,
//!   sized below the process's open-files limit ([`Limits::for_nofile`]),
//!   so that the hub's own files (the broker, the lichess push) always
//!   open;
//! * a connection that sends no complete request head within
//!   [`Limits::header_timeout`] of its first byte (or of opening, if it
//!   says nothing) is closed (slowloris); one idle between requests for
//!   [`Limits::idle_timeout`] is closed;
//! * a new connection over the cap sheds, in this order, the connection
//!   idle longest (no request, no stream: a slow or silent client costs
//!   the least to drop), else the oldest spectators' stream, and is
//!   served once that one's socket is closed (a shed connection counts
//!   until then: the files in use stay under the cap); with neither it
//!   gets a quick `503` and is closed, never a hang;
//! * spectators' streams (`/public/events`) take at most
//!   [`Limits::max_public_streams`]: the rest of the cap
//!   ([`Limits::arbiter_reserve`]) stays for the arbiters' streams and
//!   their requests, which are never shed for a spectator.
//!
//! Times are tokio's ([`tokio::time::Instant`]): the rules are tested with
//! paused time.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

/// Open files kept for the hub itself (the runtime, the broker's
/// connection, the lichess push, logs): the connection cap is the
/// open-files limit less these.
pub const OWN_FILES: u64 = 64;
/// The default wait for a request's head (first request: from opening).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default wait between two requests of a kept-alive connection.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Refusals (`503`) written at once; a flood beyond this is closed
/// without an answer.
const REFUSERS: usize = 16;
/// How long a refusal may take to write.
const REFUSAL_WRITE: Duration = Duration::from_secs(1);
/// The longest wait for a shed connection's socket to close.
const SHED_WAIT: Duration = Duration::from_millis(200);
/// After a failed accept (out of files): the pause before the next.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);
/// The shortest time between two warnings about shedding.
const WARN_EVERY: Duration = Duration::from_secs(10);

const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
Content-Type: text/plain; charset=utf-8\r\nContent-Length: 35\r\n\
Retry-After: 5\r\nConnection: close\r\n\r\n\
the hub is full: try again shortly\n";

/// The connection limits and timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    /// Of `max_connections`, what spectators' streams may not take.
    pub arbiter_reserve: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
}

impl Limits {
    /// The limits for an open-files limit of `nofile`: the cap is
    /// `nofile - OWN_FILES` (or `max`, which must not be more), an eighth
    /// of it (at least 4) kept for the arbiters.
    pub fn for_nofile(
        nofile: u64,
        max: Option<usize>,
        header_timeout: Duration,
        idle_timeout: Duration,
    ) -> Result<Limits, String> {
        let room = usize::try_from(nofile.saturating_sub(OWN_FILES)).unwrap_or(usize::MAX);
        let max_connections = match max {
            Some(max) if max > room => {
                return Err(format!(
                    "--max-connections {max}: the open-files limit is {nofile}, which leaves room \
                     for {room} connections ({OWN_FILES} files are kept for the hub itself): \
                     raise the limit (LimitNOFILE= in the unit) or lower the cap"
                ))
            }
            Some(max) => max,
            None => room,
        };
        if max_connections < 16 {
            return Err(format!(
                "room for {max_connections} connections only (open-files limit {nofile}, \
                 {OWN_FILES} kept for the hub): give the hub at least {} open files",
                OWN_FILES + 16
            ));
        }
        Ok(Limits {
            max_connections,
            arbiter_reserve: (max_connections / 8).max(4),
            header_timeout,
            idle_timeout,
        })
    }

    /// The most spectators' streams open at once.
    pub fn max_public_streams(&self) -> usize {
        self.max_connections.saturating_sub(self.arbiter_reserve)
    }
}

/// The process's open-files limit (the soft one), if it can be read.
pub fn nofile() -> Option<u64> {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .ok()
        .map(|(soft, _)| soft)
}

/// What a connection's task is told.
#[derive(Default)]
struct Signals {
    /// Close now (shed).
    close: Notify,
    /// Its state changed: its deadline is to be read again.
    changed: Notify,
}

/// One open connection.
struct Entry {
    signals: Arc<Signals>,
    opened: Instant,
    /// Requests being answered (their handlers running).
    busy: u32,
    /// Requests taken so far.
    served: u64,
    /// Open event streams, and of them the spectators'.
    streams: u32,
    public_streams: u32,
    /// Since when it has had no request and no stream.
    idle_since: Instant,
    /// When the first byte of the next request's head came (while idle).
    heard: Option<Instant>,
}

impl Entry {
    fn idle(&self) -> bool {
        self.busy == 0 && self.streams == 0
    }

    /// When an idle connection is closed (`None`: it is not idle).
    fn deadline(&self, limits: &Limits) -> Option<Instant> {
        if !self.idle() {
            return None;
        }
        Some(match self.heard {
            // A head on its way: it has the header timeout from its first
            // byte, and never more than the idle timeout.
            Some(heard) => (heard + limits.header_timeout)
                .min(self.idle_since + limits.idle_timeout.max(limits.header_timeout)),
            None if self.served == 0 => self.opened + limits.header_timeout,
            None => self.idle_since + limits.idle_timeout,
        })
    }
}

#[derive(Default)]
struct Counts {
    shed_idle: u64,
    shed_streams: u64,
    refused: u64,
    refused_streams: u64,
}

struct Inner {
    conns: HashMap<u64, Entry>,
    /// Shed connections whose tasks have not yet closed their sockets:
    /// they still hold a file, and count against the cap.
    closing: usize,
    next: u64,
    counts: Counts,
    warned: Option<Instant>,
}

/// The open connections.
pub struct Table {
    limits: Limits,
    inner: Mutex<Inner>,
    /// A shed connection's socket is closed.
    closed: Notify,
}

/// What [`Table::admit`] decides.
#[derive(Debug)]
pub enum Admission {
    Admitted(Ticket),
    /// A connection was shed to make room: wait for its socket to close
    /// ([`Table::wait_closed`]) and ask again.
    Wait,
    /// No room and nothing to shed: refuse (`503`).
    Refused,
}

/// A spectators' stream or an arbiter's (or a hall screen's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    Public,
    Arbiters,
}

impl Table {
    pub fn new(limits: Limits) -> Arc<Table> {
        Arc::new(Table {
            limits,
            inner: Mutex::new(Inner {
                conns: HashMap::new(),
                closing: 0,
                next: 0,
                counts: Counts::default(),
                warned: None,
            }),
            closed: Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every change is whole under the lock: a poisoned table is whole.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Open connections.
    pub fn open(&self) -> usize {
        self.lock().conns.len()
    }

    /// Takes a new connection if there is room, counting the shed ones
    /// still closing; else sheds one (see the module's promises) and says
    /// to wait for it, or says to refuse.
    pub fn admit(self: &Arc<Table>, now: Instant) -> Admission {
        let mut inner = self.lock();
        if inner.conns.len() + inner.closing >= self.limits.max_connections {
            if inner.closing > 0 || shed_one(&mut inner) {
                self.warn(&mut inner, now);
                return Admission::Wait;
            }
            inner.counts.refused += 1;
            self.warn(&mut inner, now);
            return Admission::Refused;
        }
        let id = inner.next;
        inner.next += 1;
        let signals = Arc::new(Signals::default());
        inner.conns.insert(
            id,
            Entry {
                signals: signals.clone(),
                opened: now,
                busy: 0,
                served: 0,
                streams: 0,
                public_streams: 0,
                idle_since: now,
                heard: None,
            },
        );
        Admission::Admitted(Ticket {
            table: self.clone(),
            id,
            signals,
        })
    }

    /// Until a shed connection's socket is closed (or `limit` passed).
    pub async fn wait_closed(&self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.closed.notified()).await;
    }

    /// Sheds the connection idle longest (out of files: one is needed).
    pub fn shed_idle(&self, now: Instant) -> bool {
        let mut inner = self.lock();
        let shed = shed_one_idle(&mut inner);
        if shed {
            self.warn(&mut inner, now);
        }
        shed
    }

    /// A warning with the counts, at most every [`WARN_EVERY`].
    fn warn(&self, inner: &mut Inner, now: Instant) {
        if inner
            .warned
            .is_some_and(|at| now.saturating_duration_since(at) < WARN_EVERY)
        {
            return;
        }
        inner.warned = Some(now);
        let c = &inner.counts;
        tracing::warn!(
            open = inner.conns.len(),
            max = self.limits.max_connections,
            shed_idle = c.shed_idle,
            shed_spectator_streams = c.shed_streams,
            refused = c.refused,
            refused_spectator_streams = c.refused_streams,
            "hub: at the connection cap: shedding (counts since the start)"
        );
    }
}

/// Drops the connection idle longest, else the oldest spectators' stream.
fn shed_one(inner: &mut Inner) -> bool {
    if shed_one_idle(inner) {
        return true;
    }
    let victim = inner
        .conns
        .iter()
        .filter(|(_, e)| e.public_streams > 0)
        .min_by_key(|(id, e)| (e.opened, **id))
        .map(|(id, _)| *id);
    match victim.and_then(|id| inner.conns.remove(&id)) {
        Some(entry) => {
            inner.counts.shed_streams += 1;
            inner.closing += 1;
            entry.signals.close.notify_one();
            true
        }
        None => false,
    }
}

fn shed_one_idle(inner: &mut Inner) -> bool {
    let victim = inner
        .conns
        .iter()
        .filter(|(_, e)| e.idle())
        .min_by_key(|(id, e)| (e.heard.map_or(e.idle_since, |h| h.min(e.idle_since)), **id))
        .map(|(id, _)| *id);
    match victim.and_then(|id| inner.conns.remove(&id)) {
        Some(entry) => {
            inner.counts.shed_idle += 1;
            inner.closing += 1;
            entry.signals.close.notify_one();
            true
        }
        None => false,
    }
}

/// A connection's place in the [`Table`]; its requests carry it (as an
/// extension) so that a stream can be counted.
#[derive(Clone)]
pub struct Ticket {
    table: Arc<Table>,
    id: u64,
    signals: Arc<Signals>,
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ticket({})", self.id)
    }
}

/// The connection is full (`503`): no stream for spectators now.
#[derive(Debug, PartialEq, Eq)]
pub struct Full;

impl Ticket {
    /// Changes the entry (if it is still there: a shed one is not) and
    /// tells the connection's task.
    fn change(&self, change: impl FnOnce(&mut Entry)) {
        let mut inner = self.table.lock();
        if let Some(entry) = inner.conns.get_mut(&self.id) {
            change(entry);
            self.signals.changed.notify_one();
        }
    }

    /// A byte came in.
    fn heard(&self, now: Instant) {
        let mut inner = self.table.lock();
        if let Some(entry) = inner.conns.get_mut(&self.id) {
            if entry.idle() && entry.heard.is_none() {
                entry.heard = Some(now);
                self.signals.changed.notify_one();
            }
        }
    }

    /// A request's head is in: the connection is busy until the guard
    /// goes (its response made).
    fn begin(&self) -> Busy {
        self.change(|e| {
            e.busy += 1;
            e.served += 1;
            e.heard = None;
        });
        Busy(self.clone())
    }

    /// When the connection is closed for idleness (`None`: busy, or gone).
    fn deadline(&self) -> Option<Instant> {
        let inner = self.table.lock();
        inner
            .conns
            .get(&self.id)
            .and_then(|e| e.deadline(&self.table.limits))
    }

    fn gone(&self) -> bool {
        !self.table.lock().conns.contains_key(&self.id)
    }

    /// An event stream on this connection, counted while the guard lives;
    /// a spectators' stream is refused over
    /// [`Limits::max_public_streams`].
    pub fn stream(&self, kind: StreamKind) -> Result<StreamGuard, Full> {
        let mut inner = self.table.lock();
        if kind == StreamKind::Public {
            let open: u32 = inner.conns.values().map(|e| e.public_streams).sum();
            if open as usize >= self.table.limits.max_public_streams() {
                inner.counts.refused_streams += 1;
                self.table.warn(&mut inner, Instant::now());
                return Err(Full);
            }
        }
        if let Some(entry) = inner.conns.get_mut(&self.id) {
            entry.streams += 1;
            if kind == StreamKind::Public {
                entry.public_streams += 1;
            }
            self.signals.changed.notify_one();
        }
        Ok(StreamGuard {
            ticket: self.clone(),
            kind,
        })
    }

    /// The connection's socket is closed: its place is free (a shed
    /// one's, counted as closing until now, too).
    fn closed(&self) {
        let mut inner = self.table.lock();
        if inner.conns.remove(&self.id).is_none() {
            inner.closing = inner.closing.saturating_sub(1);
            drop(inner);
            self.table.closed.notify_one();
        }
    }
}

/// A request being answered (see [`Ticket::begin`]).
struct Busy(Ticket);

impl Drop for Busy {
    fn drop(&mut self) {
        let now = Instant::now();
        self.0.change(|e| {
            e.busy = e.busy.saturating_sub(1);
            if e.idle() {
                e.idle_since = now;
            }
        });
    }
}

/// An open event stream (see [`Ticket::stream`]).
#[derive(Debug)]
pub struct StreamGuard {
    ticket: Ticket,
    kind: StreamKind,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let now = Instant::now();
        let kind = self.kind;
        self.ticket.change(|e| {
            e.streams = e.streams.saturating_sub(1);
            if kind == StreamKind::Public {
                e.public_streams = e.public_streams.saturating_sub(1);
            }
            if e.idle() {
                e.idle_since = now;
            }
        });
    }
}

/// A connection's socket, noting when bytes come in (a request's head
/// begins).
struct Watched {
    stream: TcpStream,
    ticket: Ticket,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.ticket.heard(Instant::now());
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Serves `router` on `listener` under `limits` until `shutdown`
/// completes (then every connection is dropped).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let table = Table::new(limits);
    let refusers = Arc::new(Semaphore::new(REFUSERS));
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
            // Finished connections' tasks are reaped as they end.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of files (or another passing error): free one if
                // anyone is idle, and try again shortly.
                let shed = table.shed_idle(Instant::now());
                tracing::warn!(%error, shed, "hub: cannot accept a connection");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        // Waiting for a shed socket to close keeps the files in use under
        // the cap: meanwhile new clients wait in the listen queue.
        let admitted = loop {
            match table.admit(Instant::now()) {
                Admission::Admitted(ticket) => break Some(ticket),
                Admission::Wait => table.wait_closed(SHED_WAIT).await,
                Admission::Refused => break None,
            }
        };
        match admitted {
            Some(ticket) => {
                connections.spawn(connection(ticket, stream, peer, router.clone()));
            }
            None => {
                if let Ok(permit) = refusers.clone().try_acquire_owned() {
                    tokio::spawn(async move {
                        let _permit = permit;
                        refuse(stream).await;
                    });
                }
                // else: dropped, closed at once.
            }
        }
    }
}

/// A quick `503` and close.
async fn refuse(mut stream: TcpStream) {
    let _ = tokio::time::timeout(REFUSAL_WRITE, async {
        stream.write_all(REFUSAL).await?;
        stream.shutdown().await
    })
    .await;
}

/// Serves one connection until it ends, is shed or stays idle too long.
async fn connection(ticket: Ticket, stream: TcpStream, peer: SocketAddr, router: Router) {
    use tower_service::Service;
    let _ = stream.set_nodelay(true);
    let io = hyper_util::rt::TokioIo::new(Watched {
        stream,
        ticket: ticket.clone(),
    });
    let for_requests = ticket.clone();
    let service =
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let busy = for_requests.begin();
            let mut request = request.map(axum::body::Body::new);
            // The client's address: failed logins are counted per address.
            request.extensions_mut().insert(ConnectInfo(peer));
            request.extensions_mut().insert(for_requests.clone());
            let mut router = router.clone();
            async move {
                let response = router.call(request).await;
                drop(busy);
                response
            }
        });
    let mut builder = hyper::server::conn::http1::Builder::new();
    // The header and idle timeouts are this module's (hyper's own would
    // close kept-alive connections at its header timeout).
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(None);
    let mut serving = Box::pin(builder.serve_connection(io, service));
    loop {
        let deadline = ticket.deadline();
        tokio::select! {
            _ = &mut serving => break,
            () = ticket.signals.close.notified() => break,
            () = ticket.signals.changed.notified() => {}
            () = sleep_until(deadline) => {
                if ticket.deadline().is_some_and(|d| d <= Instant::now()) {
                    tracing::debug!(%peer, "hub: a connection closed: idle or too slow");
                    break;
                }
            }
        }
        if ticket.gone() {
            break;
        }
    }
    // The socket closes with the connection; then its place is free.
    drop(serving);
    ticket.closed();
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn limits(max: usize) -> Limits {
        Limits {
            max_connections: max,
            arbiter_reserve: 2,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
        }
    }

    #[test]
    fn the_cap_is_sized_below_the_open_files_limit() {
        let l = Limits::for_nofile(256, None, HEADER_TIMEOUT, IDLE_TIMEOUT).unwrap();
        assert_eq!(l.max_connections, 192);
        assert_eq!(l.arbiter_reserve, 24);
        assert_eq!(l.max_public_streams(), 168);
        let l = Limits::for_nofile(4096, Some(1000), HEADER_TIMEOUT, IDLE_TIMEOUT).unwrap();
        assert_eq!(l.max_connections, 1000);
        let error = Limits::for_nofile(256, Some(200), HEADER_TIMEOUT, IDLE_TIMEOUT).unwrap_err();
        assert!(error.contains("room for 192"), "{error}");
        assert!(Limits::for_nofile(70, None, HEADER_TIMEOUT, IDLE_TIMEOUT).is_err());
    }

    fn admitted(table: &Arc<Table>, at: Instant) -> Ticket {
        match table.admit(at) {
            Admission::Admitted(ticket) => ticket,
            other => panic!("{other:?}"),
        }
    }

    /// Over the cap: `victim` is shed, and the newcomer waits until its
    /// socket is closed.
    fn admitted_after_shedding(table: &Arc<Table>, at: Instant, victim: &Ticket) -> Ticket {
        assert!(matches!(table.admit(at), Admission::Wait));
        assert!(victim.gone());
        // Still closing: still counted.
        assert!(matches!(table.admit(at), Admission::Wait));
        victim.closed();
        admitted(table, at)
    }

    #[tokio::test(start_paused = true)]
    async fn over_the_cap_the_idle_go_first_then_spectators_streams_then_refusal() {
        let table = Table::new(limits(4));
        let t0 = Instant::now();
        let a = admitted(&table, t0);
        let b = admitted(&table, t0 + Duration::from_secs(1));
        let c = admitted(&table, t0 + Duration::from_secs(2));
        let d = admitted(&table, t0 + Duration::from_secs(3));
        // a streams for spectators, c for an arbiter; b, d are busy.
        let _a_stream = a.stream(StreamKind::Public).unwrap();
        let _c_stream = c.stream(StreamKind::Arbiters).unwrap();
        let b_busy = b.begin();
        let _d_busy = d.begin();
        // Full, none idle: the spectators' stream goes.
        let e = admitted_after_shedding(&table, t0 + Duration::from_secs(4), &a);
        assert!(!c.gone());
        assert_eq!(table.open(), 4);
        // b answers: it is idle, shed before anyone.
        drop(b_busy);
        let _e_busy = e.begin();
        let f = admitted_after_shedding(&table, t0 + Duration::from_secs(5), &b);
        // c (an arbiter's stream), d, e busy, f idle: f goes for g...
        let g = admitted_after_shedding(&table, t0 + Duration::from_secs(6), &f);
        let _g_busy = g.begin();
        // ...and then nothing can go: refused.
        assert!(matches!(
            table.admit(t0 + Duration::from_secs(7)),
            Admission::Refused
        ));
        assert!(!c.gone() && !d.gone());
        // A connection that ends frees its place at once.
        d.closed();
        admitted(&table, t0 + Duration::from_secs(8));
    }

    #[tokio::test(start_paused = true)]
    async fn spectators_streams_leave_the_reserve_to_the_arbiters() {
        let table = Table::new(limits(5));
        let tickets: Vec<Ticket> = (0..5).map(|_| admitted(&table, Instant::now())).collect();
        let streams: Vec<StreamGuard> = tickets[..3]
            .iter()
            .map(|t| t.stream(StreamKind::Public).unwrap())
            .collect();
        assert_eq!(tickets[3].stream(StreamKind::Public).unwrap_err(), Full);
        let arbiter = tickets[3].stream(StreamKind::Arbiters).unwrap();
        assert_eq!(tickets[4].stream(StreamKind::Arbiters).map(drop), Ok(()));
        drop(streams);
        assert!(tickets[4].stream(StreamKind::Public).is_ok());
        drop(arbiter);
    }

    #[tokio::test(start_paused = true)]
    async fn silent_slow_and_idle_connections_have_their_deadlines() {
        let table = Table::new(limits(8));
        let t0 = Instant::now();
        let silent = admitted(&table, t0);
        assert_eq!(silent.deadline(), Some(t0 + Duration::from_secs(10)));
        // A head dribbling in: 10 s from its first byte, whatever follows.
        let slow = admitted(&table, t0);
        slow.heard(t0 + Duration::from_secs(3));
        slow.heard(t0 + Duration::from_secs(9));
        assert_eq!(slow.deadline(), Some(t0 + Duration::from_secs(13)));
        // Answered: busy has no deadline; then idle for 60 s.
        let kept = admitted(&table, t0);
        let busy = kept.begin();
        assert_eq!(kept.deadline(), None);
        tokio::time::advance(Duration::from_secs(5)).await;
        drop(busy);
        assert_eq!(kept.deadline(), Some(t0 + Duration::from_secs(65)));
        // A stream has none either.
        let stream = kept.stream(StreamKind::Arbiters).unwrap();
        assert_eq!(kept.deadline(), None);
        drop(stream);
        assert!(kept.deadline().is_some());
    }
}
