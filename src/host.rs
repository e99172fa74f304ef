//! The host's health beside its boards': whether it has a radio that may
//! transmit (see [`crate::radios`]) and whether its clock is
//! NTP-synchronised, for the chief arbiter of a wired hall.
//!
//! Promises:
//! * one writer, the [`watch`] task (and a reload's [`SharedHostHealth::set_policy`]);
//!   any number of readers, each read one `Arc` clone, so no reader ever
//!   waits for a check and a check never waits for a reader. Readers that
//!   subscribe hear of each change, never of a check that changed nothing;
//! * the checks run on the control runtime every [`CHECK_EVERY`], never on
//!   the timing thread: a sysfs scan of a few small files and one D-Bus
//!   property read of systemd-timedated;
//! * `findings` says, one line each, what a chief arbiter acts on: a radio
//!   on where `[daemon] radios = "forbid"`, radios that cannot be checked
//!   there, and a clock that is not NTP-synchronised. A synchronisation
//!   nobody can tell (no timedated) is shown, not a finding: a host without
//!   it is no evidence of a wrong clock.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::radios::{self, Radio, RadioPolicy};

/// How often the radios and the clock's synchronisation are checked.
pub const CHECK_EVERY: Duration = Duration::from_secs(10);

/// What the host's checks found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HostHealth {
    /// `[daemon] radios`: `allow` or `forbid`.
    pub radios_policy: RadioPolicy,
    /// Every radio the kernel reports (empty on a wired host).
    pub radios: Vec<Radio>,
    /// What of sysfs could not be read.
    pub radios_unreadable: Vec<String>,
    /// `true` synchronised, `false` not, `null` unknown (see `ntp_unknown`);
    /// also `null` before the first check.
    pub ntp_synchronized: Option<bool>,
    /// Why the synchronisation is unknown.
    pub ntp_unknown: Option<String>,
    /// What to act on, one line each; empty when all is well.
    pub findings: Vec<String>,
}

impl HostHealth {
    fn with_findings(mut self) -> HostHealth {
        let scan = radios::RadioScan {
            radios: self.radios.clone(),
            unreadable: self.radios_unreadable.clone(),
        };
        self.findings = scan.finding(self.radios_policy).into_iter().collect();
        if self.ntp_synchronized == Some(false) {
            self.findings.push(
                "the system clock is not NTP-synchronised: scheduled starts are refused \
                 and this host's times may disagree with the hall's"
                    .to_owned(),
            );
        }
        self
    }

    /// The clock's synchronisation as the last check found it: `Ok(true)`,
    /// `Ok(false)`, or why nobody can tell (no timedated, or no check yet):
    /// what [`crate::scheduled::check_synchronized`] takes.
    pub fn synchronization(&self) -> Result<bool, String> {
        match (self.ntp_synchronized, &self.ntp_unknown) {
            (Some(answer), _) => Ok(answer),
            (None, Some(why)) => Err(why.clone()),
            (None, None) => Err("the host's clock has not been checked yet".to_owned()),
        }
    }

    /// One line each for `chessclockctl status`: the findings. What the
    /// host has beyond them (radios allowed on, a synchronisation nobody
    /// can tell) is in the JSON (`status --json`, `HostHealth`), not in the
    /// table's notes: it is nothing to act on.
    pub fn notes(&self) -> Vec<String> {
        self.findings
            .iter()
            .map(|finding| format!("host: {finding}"))
            .collect()
    }
}

/// The host's health, shared (see the module's promises).
#[derive(Clone, Debug)]
pub struct SharedHostHealth(Arc<tokio::sync::watch::Sender<Arc<HostHealth>>>);

impl Default for SharedHostHealth {
    fn default() -> SharedHostHealth {
        SharedHostHealth::new(RadioPolicy::default())
    }
}

impl SharedHostHealth {
    pub fn new(policy: RadioPolicy) -> SharedHostHealth {
        let health = HostHealth {
            radios_policy: policy,
            ..HostHealth::default()
        };
        SharedHostHealth(Arc::new(tokio::sync::watch::Sender::new(Arc::new(health))))
    }

    /// The health now.
    pub fn get(&self) -> Arc<HostHealth> {
        Arc::clone(&self.0.borrow())
    }

    /// Wakes its holder at each change.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<Arc<HostHealth>> {
        self.0.subscribe()
    }

    /// A reload's `[daemon] radios`: the findings follow at once.
    pub fn set_policy(&self, policy: RadioPolicy) {
        self.update(|health| health.radios_policy = policy);
    }

    fn update(&self, change: impl FnOnce(&mut HostHealth)) {
        self.0.send_if_modified(|health| {
            let mut next = HostHealth::clone(health);
            change(&mut next);
            let next = next.with_findings();
            if next == **health {
                return false;
            }
            *health = Arc::new(next);
            true
        });
    }
}

/// Checks the radios under `sys` (`/sys`) and asks `ntp` for the clock's
/// synchronisation (`Ok(true)`, `Ok(false)`, or why it cannot tell), at
/// once and then every [`CHECK_EVERY`], for as long as it runs.
pub async fn watch<Ntp, Asked>(shared: SharedHostHealth, sys: PathBuf, ntp: Ntp)
where
    Ntp: Fn() -> Asked,
    Asked: Future<Output = Result<bool, String>>,
{
    let mut every = tokio::time::interval(CHECK_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let scan = radios::scan(&sys);
        let synchronized = ntp().await;
        shared.update(|health| {
            health.radios = scan.radios;
            health.radios_unreadable = scan.unreadable;
            match synchronized {
                Ok(answer) => {
                    health.ntp_synchronized = Some(answer);
                    health.ntp_unknown = None;
                }
                Err(why) => {
                    health.ntp_synchronized = None;
                    health.ntp_unknown = Some(why);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn wifi_up(sys: &std::path::Path) {
        let dir = sys.join("class/net/wlan0");
        std::fs::create_dir_all(dir.join("wireless")).unwrap();
        std::fs::write(dir.join("flags"), "0x1003\n").unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_radio_turned_on_in_a_wired_hall_is_a_finding_at_the_next_check() {
        let sys = tempfile::tempdir().unwrap();
        let shared = SharedHostHealth::new(RadioPolicy::Forbid);
        let mut changes = shared.subscribe();
        let answers = Arc::new(Mutex::new(vec![Ok(true), Ok(true), Ok(false)]));
        let ntp = {
            let answers = Arc::clone(&answers);
            move || {
                // The clock stays unsynchronised after the three answers.
                let answer = {
                    let mut answers = answers.lock().unwrap();
                    if answers.is_empty() {
                        Ok(false)
                    } else {
                        answers.remove(0)
                    }
                };
                async move { answer }
            }
        };
        tokio::spawn(watch(shared.clone(), sys.path().to_owned(), ntp));

        // The first check, at once: a wired host, synchronised.
        changes.changed().await.unwrap();
        let health = shared.get();
        assert_eq!(health.ntp_synchronized, Some(true));
        assert!(
            health.radios.is_empty() && health.findings.is_empty(),
            "{health:?}"
        );

        // Someone brings Wi-Fi up: the next check, 10 s on, finds it.
        wifi_up(sys.path());
        let before = tokio::time::Instant::now();
        changes.changed().await.unwrap();
        assert_eq!(before.elapsed(), CHECK_EVERY);
        let health = shared.get();
        assert_eq!(
            health.findings,
            ["radios are forbidden but on: wifi wlan0 (interface up)"]
        );

        // Then the clock loses its synchronisation.
        changes.changed().await.unwrap();
        let health = shared.get();
        assert_eq!(health.findings.len(), 2, "{:?}", health.findings);
        assert!(health.findings[1].starts_with("the system clock is not NTP-synchronised"));
        assert_eq!(
            shared.get().notes(),
            [
                "host: radios are forbidden but on: wifi wlan0 (interface up)",
                "host: the system clock is not NTP-synchronised: scheduled starts are refused \
                 and this host's times may disagree with the hall's",
            ]
        );

        // A reload allowing radios: the radio finding goes at once, the
        // radio is still shown.
        shared.set_policy(RadioPolicy::Allow);
        let health = shared.get();
        assert_eq!(health.findings.len(), 1);
        assert_eq!(health.radios.len(), 1);
        assert!(!health.notes().iter().any(|note| note.contains("radio")));
    }

    #[tokio::test(start_paused = true)]
    async fn a_check_that_changes_nothing_wakes_nobody() {
        let sys = tempfile::tempdir().unwrap();
        let shared = SharedHostHealth::new(RadioPolicy::Allow);
        let mut changes = shared.subscribe();
        tokio::spawn(watch(shared.clone(), sys.path().to_owned(), || async {
            Err::<bool, _>("no time service".to_owned())
        }));
        changes.changed().await.unwrap();
        assert_eq!(shared.get().ntp_unknown.as_deref(), Some("no time service"));
        assert!(shared.get().findings.is_empty());
        assert!(shared.get().notes().is_empty());
        // Three more checks find the same: no change is announced.
        let quiet =
            tokio::time::timeout(CHECK_EVERY * 3 + Duration::from_secs(1), changes.changed());
        assert!(quiet.await.is_err());
    }
}
