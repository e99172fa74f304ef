//! The host's radios as the kernel reports them, so that a wired hall can
//! show that no board transmits (FIDE Laws Art. 11.3: no electronic device
//! may be used in the playing venue for communication).
//!
//! Read from sysfs only, never changed: every rfkill switch
//! (`/sys/class/rfkill/rfkillN`: `type`, `name`, `soft`, `hard`), every
//! wireless network interface (`/sys/class/net/IF` with a `wireless`
//! directory or a `phy80211` link: its `flags`' IFF_UP bit) and every
//! Bluetooth controller (`/sys/class/bluetooth/hciN`).
//!
//! Promises:
//! * a radio is `on` (it may transmit) unless the kernel says it cannot: its
//!   rfkill switch blocks it (soft or hard), or, for Wi-Fi, its interface is
//!   administratively down. When in doubt it is on: a Bluetooth controller
//!   the kernel knows and no switch blocks counts as on, since sysfs does not
//!   say whether it is powered;
//! * a radio is listed once: a Wi-Fi interface and its phy's rfkill switch
//!   are one radio, as are a Bluetooth controller and its switch;
//! * a sysfs that cannot be read is not "no radios": the scan says what it
//!   could not read;
//! * the scan reads a few small files and costs well under a millisecond;
//!   it runs on the control runtime, never on the timing thread.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What `[daemon] radios` asks of this host's radios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RadioPolicy {
    /// Radios are reported; one that is on is no finding.
    #[default]
    Allow,
    /// A radio that is on is a finding (a wired hall).
    Forbid,
}

impl RadioPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            RadioPolicy::Allow => "allow",
            RadioPolicy::Forbid => "forbid",
        }
    }
}

/// One radio of the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Radio {
    /// `wifi`, `bluetooth`, or rfkill's own type name for others (`wwan`,
    /// `gps`, `nfc`, `fm`, `uwb`, `wimax`).
    pub kind: String,
    /// The kernel's name: the network interface for Wi-Fi (`wlan0`), the
    /// controller for Bluetooth (`hci0`), else the rfkill switch's name.
    pub name: String,
    /// It may transmit.
    pub on: bool,
    /// Why it is on or off, in words: `interface up`, `interface down`,
    /// `blocked by rfkill (soft)`, `blocked by rfkill (hard)`, `not blocked`.
    pub why: String,
}

/// What one scan found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RadioScan {
    pub radios: Vec<Radio>,
    /// What could not be read (a path and the error), if anything.
    pub unreadable: Vec<String>,
}

impl RadioScan {
    /// The radios that may transmit.
    pub fn on(&self) -> impl Iterator<Item = &Radio> {
        self.radios.iter().filter(|radio| radio.on)
    }

    /// The finding under `policy`, in words, or None: a radio on where they
    /// are forbidden, or a sysfs that could not be read (then nobody can
    /// say that no radio is on).
    pub fn finding(&self, policy: RadioPolicy) -> Option<String> {
        if policy == RadioPolicy::Allow {
            return None;
        }
        let on: Vec<String> = self
            .on()
            .map(|radio| format!("{} {} ({})", radio.kind, radio.name, radio.why))
            .collect();
        if !on.is_empty() {
            return Some(format!("radios are forbidden but on: {}", on.join(", ")));
        }
        if !self.unreadable.is_empty() {
            return Some(format!(
                "radios are forbidden and cannot be checked: {}",
                self.unreadable.join("; ")
            ));
        }
        None
    }
}

/// One rfkill switch.
#[derive(Debug, Clone)]
struct Switch {
    kind: String,
    name: String,
    soft: bool,
    hard: bool,
    /// Taken by a Wi-Fi interface or a Bluetooth controller.
    claimed: bool,
}

impl Switch {
    fn blocked_why(&self) -> Option<&'static str> {
        if self.hard {
            Some("blocked by rfkill (hard)")
        } else if self.soft {
            Some("blocked by rfkill (soft)")
        } else {
            None
        }
    }
}

/// Scans the sysfs mounted at `sys` (`/sys` on a host; a directory tree of
/// the same shape in tests).
pub fn scan(sys: &Path) -> RadioScan {
    let mut scan = RadioScan::default();
    let mut switches = read_switches(&sys.join("class/rfkill"), &mut scan.unreadable);

    for interface in entries(&sys.join("class/net"), &mut scan.unreadable) {
        let name = file_name(&interface);
        let phy = fs::read_link(interface.join("phy80211"))
            .ok()
            .map(|link| file_name(&link));
        if phy.is_none() && !interface.join("wireless").is_dir() {
            continue;
        }
        let switch = switches
            .iter_mut()
            .find(|switch| switch.kind == "wlan" && Some(&switch.name) == phy.as_ref());
        let blocked = switch.and_then(|switch| {
            switch.claimed = true;
            switch.blocked_why()
        });
        let (on, why) = match blocked {
            Some(why) => (false, why.to_string()),
            None => match read_flags(&interface.join("flags")) {
                Ok(flags) if flags & IFF_UP != 0 => (true, "interface up".to_string()),
                Ok(_) => (false, "interface down".to_string()),
                Err(error) => {
                    scan.unreadable.push(error);
                    (true, "interface state unknown".to_string())
                }
            },
        };
        scan.radios.push(Radio {
            kind: "wifi".into(),
            name,
            on,
            why,
        });
    }

    for controller in entries(&sys.join("class/bluetooth"), &mut scan.unreadable) {
        let name = file_name(&controller);
        // hci0 has its switch named hci0.
        let blocked = switches
            .iter_mut()
            .find(|switch| switch.kind == "bluetooth" && switch.name == name)
            .and_then(|switch| {
                switch.claimed = true;
                switch.blocked_why()
            });
        scan.radios.push(Radio {
            kind: "bluetooth".into(),
            on: blocked.is_none(),
            why: blocked.unwrap_or("not blocked").to_string(),
            name,
        });
    }

    // Switches of radios without an interface or controller: a wlan phy
    // with no interface cannot transmit; anything else unblocked may.
    for switch in switches.iter().filter(|switch| !switch.claimed) {
        if switch.kind == "wlan" {
            continue;
        }
        let kind = if switch.kind == "bluetooth" {
            "bluetooth".to_string()
        } else {
            switch.kind.clone()
        };
        let blocked = switch.blocked_why();
        scan.radios.push(Radio {
            kind,
            name: switch.name.clone(),
            on: blocked.is_none(),
            why: blocked.unwrap_or("not blocked").to_string(),
        });
    }
    scan
}

/// The interface is administratively up (`include/uapi/linux/if.h`).
const IFF_UP: u32 = 0x1;

fn read_switches(dir: &Path, unreadable: &mut Vec<String>) -> Vec<Switch> {
    let mut switches = Vec::new();
    for path in entries(dir, unreadable) {
        let read = |file: &str| -> Result<String, String> {
            let at = path.join(file);
            fs::read_to_string(&at)
                .map(|text| text.trim().to_string())
                .map_err(|error| format!("{}: {error}", at.display()))
        };
        let switch = (|| {
            Ok::<_, String>(Switch {
                kind: read("type")?,
                name: read("name")?,
                soft: read("soft")? != "0",
                hard: read("hard")? != "0",
                claimed: false,
            })
        })();
        match switch {
            Ok(switch) => switches.push(switch),
            Err(error) => unreadable.push(error),
        }
    }
    switches
}

fn read_flags(path: &Path) -> Result<u32, String> {
    let text = fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let digits = text.trim().trim_start_matches("0x");
    u32::from_str_radix(digits, 16).map_err(|_| {
        format!(
            "{}: not a hexadecimal number: {:?}",
            path.display(),
            text.trim()
        )
    })
}

/// The entries of a sysfs class directory, sorted by name. A class the
/// kernel does not have (no rfkill, no Bluetooth) has no entries; any other
/// error is reported.
fn entries(dir: &Path, unreadable: &mut Vec<String>) -> Vec<PathBuf> {
    match fs::read_dir(dir) {
        Ok(read) => {
            let mut paths: Vec<PathBuf> =
                read.filter_map(|entry| Some(entry.ok()?.path())).collect();
            paths.sort();
            paths
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => {
            unreadable.push(format!("{}: {error}", dir.display()));
            Vec::new()
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A sysfs tree in a temporary directory.
    struct Sys(tempfile::TempDir);

    impl Sys {
        fn new() -> Sys {
            Sys(tempfile::tempdir().unwrap())
        }
        fn root(&self) -> &Path {
            self.0.path()
        }
        fn write(&self, path: &str, text: &str) {
            let at = self.root().join(path);
            fs::create_dir_all(at.parent().unwrap()).unwrap();
            fs::write(at, format!("{text}\n")).unwrap();
        }
        fn switch(&self, index: u32, kind: &str, name: &str, soft: u8, hard: u8) {
            let dir = format!("class/rfkill/rfkill{index}");
            self.write(&format!("{dir}/type"), kind);
            self.write(&format!("{dir}/name"), name);
            self.write(&format!("{dir}/soft"), &soft.to_string());
            self.write(&format!("{dir}/hard"), &hard.to_string());
        }
        fn wifi(&self, interface: &str, phy: &str, flags: &str) {
            let dir = format!("class/net/{interface}");
            self.write(&format!("{dir}/flags"), flags);
            fs::create_dir_all(self.root().join("phys").join(phy)).unwrap();
            symlink(
                self.root().join("phys").join(phy),
                self.root().join(&dir).join("phy80211"),
            )
            .unwrap();
        }
        fn wired(&self, interface: &str) {
            self.write(&format!("class/net/{interface}/flags"), "0x1003");
        }
        fn bluetooth(&self, controller: &str) {
            fs::create_dir_all(self.root().join("class/bluetooth").join(controller)).unwrap();
        }
    }

    fn summary(scan: &RadioScan) -> Vec<String> {
        scan.radios
            .iter()
            .map(|radio| {
                format!(
                    "{} {} on={} ({})",
                    radio.kind, radio.name, radio.on, radio.why
                )
            })
            .collect()
    }

    #[test]
    fn a_wired_host_has_no_radio_and_no_finding() {
        let sys = Sys::new();
        sys.wired("eth0");
        sys.wired("lo");
        let scan = scan(sys.root());
        assert_eq!(scan, RadioScan::default());
        assert_eq!(scan.finding(RadioPolicy::Forbid), None);
    }

    #[test]
    fn a_pi_with_wifi_up_and_bluetooth_unblocked_transmits() {
        // A Raspberry Pi 4 as shipped: wlan0 up on phy0, hci0 with its switch.
        let sys = Sys::new();
        sys.wired("eth0");
        sys.switch(0, "wlan", "phy0", 0, 0);
        sys.switch(1, "bluetooth", "hci0", 0, 0);
        sys.wifi("wlan0", "phy0", "0x1003");
        sys.bluetooth("hci0");
        let scan = scan(sys.root());
        assert_eq!(
            summary(&scan),
            [
                "wifi wlan0 on=true (interface up)",
                "bluetooth hci0 on=true (not blocked)",
            ]
        );
        assert_eq!(scan.finding(RadioPolicy::Allow), None);
        assert_eq!(
            scan.finding(RadioPolicy::Forbid).unwrap(),
            "radios are forbidden but on: wifi wlan0 (interface up), bluetooth hci0 (not blocked)"
        );
    }

    #[test]
    fn rfkill_blocks_and_a_down_interface_are_off() {
        let sys = Sys::new();
        sys.switch(0, "wlan", "phy0", 1, 0);
        sys.switch(1, "bluetooth", "hci0", 0, 1);
        sys.switch(2, "wlan", "phy1", 0, 0);
        sys.wifi("wlan0", "phy0", "0x1003");
        sys.wifi("wlan1", "phy1", "0x1002");
        sys.bluetooth("hci0");
        let scan = scan(sys.root());
        assert_eq!(
            summary(&scan),
            [
                "wifi wlan0 on=false (blocked by rfkill (soft))",
                "wifi wlan1 on=false (interface down)",
                "bluetooth hci0 on=false (blocked by rfkill (hard))",
            ]
        );
        assert_eq!(scan.finding(RadioPolicy::Forbid), None);
    }

    #[test]
    fn a_switch_without_an_interface_counts_only_if_it_can_transmit() {
        // A wlan phy without an interface cannot send; an unblocked wwan can.
        let sys = Sys::new();
        sys.switch(0, "wlan", "phy0", 0, 0);
        sys.switch(1, "wwan", "modem0", 0, 0);
        sys.switch(2, "bluetooth", "hci1", 1, 0);
        let scan = scan(sys.root());
        assert_eq!(
            summary(&scan),
            [
                "wwan modem0 on=true (not blocked)",
                "bluetooth hci1 on=false (blocked by rfkill (soft))",
            ]
        );
    }

    #[test]
    fn an_unreadable_switch_is_a_finding_where_radios_are_forbidden() {
        let sys = Sys::new();
        sys.write("class/rfkill/rfkill0/type", "wlan");
        let scan = scan(sys.root());
        assert!(scan.radios.is_empty());
        let finding = scan.finding(RadioPolicy::Forbid).unwrap();
        assert!(
            finding.starts_with("radios are forbidden and cannot be checked: ")
                && finding.contains("rfkill0/name"),
            "{finding}"
        );
    }

    #[test]
    fn garbage_flags_leave_the_radio_on_and_say_why() {
        let sys = Sys::new();
        sys.wifi("wlan0", "phy0", "up");
        let scan = scan(sys.root());
        assert_eq!(
            summary(&scan),
            ["wifi wlan0 on=true (interface state unknown)"]
        );
        assert!(scan.unreadable[0].contains("not a hexadecimal number"));
    }

    #[test]
    fn this_machine_can_be_scanned() {
        // Whatever this host has, the real sysfs reads without error.
        let scan = scan(Path::new("/sys"));
        assert!(scan.unreadable.is_empty(), "{:?}", scan.unreadable);
    }
}
