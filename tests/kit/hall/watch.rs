//! An MQTT client of a test that records everything it sees under a filter
//! (subscribed again on every ConnAck) and publishes; and the helpers to
//! wait for a message.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rumqttc::{AsyncClient, ConnectionError, Event, Incoming, MqttOptions, QoS};
use serde_json::Value;
use tokio::sync::mpsc;

/// A message as a watcher saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub topic: String,
    pub payload: Vec<u8>,
    pub retain: bool,
}

impl Seen {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.payload).unwrap_or(Value::Null)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.payload).into_owned()
    }
}

/// A connected client that records what arrives on its filter.
pub struct Watcher {
    pub client: AsyncClient,
    seen: mpsc::UnboundedReceiver<Seen>,
    task: tokio::task::JoinHandle<()>,
    /// Every message seen, in order.
    pub log: Vec<Seen>,
    /// Where waits start looking (see [`Watcher::mark`]).
    from: usize,
    /// PUBACKs received: the broker has taken (or refused) a QoS 1 publish.
    acks: Arc<AtomicUsize>,
}

/// Options for a client of `port` on 127.0.0.1 with a login, keepalive 5 s.
pub fn options(id: &str, port: u16, login: Option<(&str, &str)>) -> MqttOptions {
    let mut options = MqttOptions::new(id, "127.0.0.1", port);
    options.set_keep_alive(Duration::from_secs(5));
    options.set_max_packet_size(1 << 20, 1 << 20);
    if let Some((user, password)) = login {
        options.set_credentials(user, password);
    }
    options
}

/// Options over TLS, trusting the CA of `ca_pem`.
pub fn tls_options(
    id: &str,
    port: u16,
    ca_pem: Vec<u8>,
    login: Option<(&str, &str)>,
) -> MqttOptions {
    let mut options = options(id, port, login);
    options.set_transport(rumqttc::Transport::tls_with_config(
        rumqttc::TlsConfiguration::Simple {
            ca: ca_pem,
            alpn: None,
            client_auth: None,
        },
    ));
    options
}

/// What the broker answers a client's first connection attempt.
pub async fn first_connection(
    options: MqttOptions,
    limit: Duration,
) -> Result<(), ConnectionError> {
    let (_client, mut eventloop) = AsyncClient::new(options, 8);
    loop {
        match tokio::time::timeout(limit, eventloop.poll())
            .await
            .expect("the broker answered in time")
        {
            Ok(Event::Incoming(Incoming::ConnAck(_))) => return Ok(()),
            Ok(_) => {}
            Err(error) => return Err(error),
        }
    }
}

impl Watcher {
    /// Connects and subscribes to `filter`; returns once the broker
    /// acknowledged the subscription (fails after `limit`).
    pub async fn connect(options: MqttOptions, filter: &str, limit: Duration) -> Watcher {
        let (client, mut eventloop) = AsyncClient::new(options, 64);
        let (tx, seen) = mpsc::unbounded_channel();
        let (up_tx, mut up) = mpsc::unbounded_channel();
        let subscriber = client.clone();
        let filter = filter.to_owned();
        let acks = Arc::new(AtomicUsize::new(0));
        let counted = acks.clone();
        let task = tokio::spawn(async move {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                        let _ = subscriber.subscribe(&filter, QoS::AtLeastOnce).await;
                    }
                    Ok(Event::Incoming(Incoming::SubAck(_))) => {
                        let _ = up_tx.send(());
                    }
                    Ok(Event::Incoming(Incoming::PubAck(_))) => {
                        counted.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok(Event::Incoming(Incoming::Publish(p))) => {
                        let _ = tx.send(Seen {
                            topic: p.topic,
                            payload: p.payload.to_vec(),
                            retain: p.retain,
                        });
                    }
                    Ok(_) => {}
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
        });
        tokio::time::timeout(limit, up.recv())
            .await
            .expect("the watcher subscribed");
        Watcher {
            client,
            seen,
            task,
            log: Vec::new(),
            from: 0,
            acks,
        }
    }

    /// Publishes at QoS 1 and waits for the broker's PUBACK: the broker has
    /// dealt with the message (forwarded it, or dropped it as its ACL says)
    /// before anything this client or another sends later.
    pub async fn publish_acked(&self, topic: &str, retain: bool, payload: &[u8]) {
        let before = self.acks.load(Ordering::SeqCst);
        self.client
            .publish(topic, QoS::AtLeastOnce, retain, payload.to_vec())
            .await
            .unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.acks.load(Ordering::SeqCst) == before {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no PUBACK for {topic}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// From now on, waits look only at messages seen from here on.
    pub fn mark(&mut self) {
        self.drain();
        self.from = self.log.len();
    }

    /// Takes what has arrived so far into the log.
    pub fn drain(&mut self) {
        while let Ok(seen) = self.seen.try_recv() {
            self.log.push(seen);
        }
    }

    /// The first message since the mark that `ready` accepts, seen
    /// already or within `limit`; fails the test otherwise.
    pub async fn wait_for(
        &mut self,
        what: &str,
        limit: Duration,
        ready: impl Fn(&Seen) -> bool,
    ) -> Seen {
        if let Some(seen) = self.log[self.from..].iter().find(|seen| ready(seen)) {
            return seen.clone();
        }
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.seen.recv()).await {
                Ok(Some(seen)) => {
                    self.log.push(seen.clone());
                    if ready(&seen) {
                        return seen;
                    }
                }
                Ok(None) => panic!("{what}: the watcher stopped"),
                Err(_) => panic!(
                    "{what}: not seen within {limit:?}; seen instead:\n{}",
                    self.log[self.from..]
                        .iter()
                        .map(|seen| format!("{} {}", seen.topic, seen.text()))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            }
        }
    }

    /// Whether any message since the mark matches.
    pub fn saw(&mut self, ready: impl Fn(&Seen) -> bool) -> bool {
        self.drain();
        self.log[self.from..].iter().any(ready)
    }

    /// Whether any message ever seen matches.
    pub fn ever_saw(&mut self, ready: impl Fn(&Seen) -> bool) -> bool {
        self.drain();
        self.log.iter().any(ready)
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}
