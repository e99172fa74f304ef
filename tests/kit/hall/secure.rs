//! A hall secured as docs/organiser.md, "Setting up the hall's broker",
//! says: the files made by `scripts/hall-credentials` from a plan, and a
//! mosquitto of the test's own run with the generated `mosquitto.conf`
//! (its TLS listener on a free port of 127.0.0.1), killed when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::Broker;

/// Runs `scripts/hall-credentials ARGS PLAN OUT` with the plan's text.
pub fn run_script(dir: &Path, plan: &str, args: &[&str], out: &Path) -> Output {
    let file = dir.join("hall.plan");
    std::fs::write(&file, plan).unwrap();
    Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/hall-credentials"
    ))
    .args(args)
    .arg(&file)
    .arg(out)
    .output()
    .expect("scripts/hall-credentials runs")
}

/// The generated files of one hall, and a port for its TLS listener (and
/// for its plain listener on 127.0.0.1, when asked for).
pub struct HallFiles {
    pub out: PathBuf,
    pub port: u16,
    pub local_port: Option<u16>,
}

impl HallFiles {
    /// Runs the script for `plan` into `dir/hall` with a TLS listener on a
    /// free port of 127.0.0.1; fails the test if the script fails.
    pub fn generate(dir: &Path, plan: &str) -> HallFiles {
        HallFiles::generate_with(dir, plan, false)
    }

    /// [`HallFiles::generate`], with `--local-port` (a plain listener on
    /// 127.0.0.1 beside the TLS one) when `local` is set.
    pub fn generate_with(dir: &Path, plan: &str, local: bool) -> HallFiles {
        let port = free_port();
        let local_port = local.then(free_port);
        let out = dir.join("hall");
        let mut args = vec![
            "--port".to_owned(),
            port.to_string(),
            "--bind".to_owned(),
            "127.0.0.1".to_owned(),
        ];
        if let Some(local) = local_port {
            args.extend(["--local-port".to_owned(), local.to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run_script(dir, plan, &args, &out);
        assert!(
            output.status.success(),
            "hall-credentials failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        HallFiles {
            out,
            port,
            local_port,
        }
    }

    /// A user's (username, password) from its generated credentials file.
    pub fn login(&self, user: &str) -> (String, String) {
        let text = std::fs::read_to_string(self.credentials(user)).unwrap();
        let value: toml::Value = toml::from_str(&text).unwrap();
        (
            value["username"].as_str().unwrap().to_owned(),
            value["password"].as_str().unwrap().to_owned(),
        )
    }

    pub fn credentials(&self, user: &str) -> PathBuf {
        self.out.join("credentials").join(format!("{user}.toml"))
    }

    pub fn ca(&self) -> PathBuf {
        self.out.join("ca.pem")
    }

    pub fn ca_pem(&self) -> Vec<u8> {
        std::fs::read(self.ca()).unwrap()
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// mosquitto with the generated configuration: the kit's [`Broker`] on
/// the generated `mosquitto.conf` as it is, plus what a test needs: no
/// persistence, and (run as root) no drop to the `mosquitto` user, who
/// could not read the test's folder.
pub struct SecureBroker;

impl SecureBroker {
    pub fn start(files: &HallFiles) -> Broker {
        let generated = std::fs::read_to_string(files.out.join("mosquitto.conf")).unwrap();
        let config = files.out.join("test-broker.conf");
        std::fs::write(
            &config,
            format!("{generated}\npersistence false\nuser root\n"),
        )
        .unwrap();
        Broker::with_config(files.port, config, files.out.join("mosquitto.log"))
    }
}
