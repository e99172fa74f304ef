//! The hub's arbiters: a password file, login sessions and the limit on
//! failed logins; and the hall screens' read tokens ([`ScreenTokens`]).
//!
//! The password file has one `USER:HASH` a line (`#` comments and blank
//! lines skipped), the hash an argon2id PHC string (`$argon2id$v=19$...`,
//! a random salt per user): never a password in plain text. `chessclock-hall
//! passwd FILE USER` adds or replaces a user ([`set_password`]).
//!
//! Promises: a password is only ever compared through argon2's verification
//! (constant time in the hash); a user name is 1 to 64 characters without
//! `:`, spaces or control characters; a session is a 256-bit random token
//! (the cookie) with a second random token against cross-site requests
//! (CSRF), both kept only in memory: a restarted hub asks the arbiters to
//! log in again. Nothing here panics on a malformed file: a bad line is an
//! error naming its line.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::Rng;

/// Failed logins of one address or user name before it must wait.
pub const LOGIN_FAILURES: usize = 5;
/// The window in which failed logins count.
pub const LOGIN_WINDOW: Duration = Duration::from_secs(60);
/// How arbiters are let in: the password file's users, their sessions and
/// the failed logins.
pub struct Access {
    pub passwords: Passwords,
    pub sessions: Sessions,
    pub failures: Failures,
}

impl Access {
    /// Sessions of `lifetime`; [`LOGIN_FAILURES`] per [`LOGIN_WINDOW`].
    pub fn new(passwords: Passwords, lifetime: Duration) -> Access {
        Access {
            passwords,
            sessions: Sessions::new(lifetime),
            failures: Failures::new(LOGIN_FAILURES, LOGIN_WINDOW),
        }
    }
}

/// The longest user name taken.
pub const MAX_USER: usize = 64;

/// Why a user name is refused (`None`: it is fine).
pub fn check_user(user: &str) -> Result<(), String> {
    if user.is_empty() || user.chars().count() > MAX_USER {
        return Err(format!("a user name has 1 to {MAX_USER} characters"));
    }
    if user
        .chars()
        .any(|c| c == ':' || c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "user name `{}`: no `:`, spaces or control characters",
            user.escape_debug()
        ));
    }
    Ok(())
}

/// The argon2id hash (PHC string) of `password` with a fresh random salt.
pub fn hash_password(password: &str) -> Result<String, String> {
    let salt_bytes: [u8; 16] = rand::rng().random();
    let salt = SaltString::encode_b64(&salt_bytes).map_err(|e| e.to_string())?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| format!("cannot hash the password: {e}"))
}

/// Whether `password` matches the PHC string `hash` (a malformed hash
/// matches nothing).
pub fn verify_password(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|hash| {
        Argon2::default()
            .verify_password(password.as_bytes(), &hash)
            .is_ok()
    })
}

/// The users of a password file: user -> PHC string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Passwords {
    users: BTreeMap<String, String>,
}

impl Passwords {
    /// Reads a password file's text (`what` names it in errors).
    pub fn parse(text: &str, what: &str) -> Result<Passwords, String> {
        let mut users = BTreeMap::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = format!("{what}:{}", number + 1);
            let (user, hash) = line
                .split_once(':')
                .ok_or_else(|| format!("{at}: expected USER:HASH"))?;
            check_user(user).map_err(|e| format!("{at}: {e}"))?;
            let parsed = PasswordHash::new(hash).map_err(|e| {
                format!("{at}: the hash of `{user}` is not a PHC string ({e}): make the line with `chessclock-hall passwd`")
            })?;
            if parsed.algorithm.as_str() != "argon2id" {
                return Err(format!(
                    "{at}: the hash of `{user}` is {}, not argon2id",
                    parsed.algorithm
                ));
            }
            if users.insert(user.to_owned(), hash.to_owned()).is_some() {
                return Err(format!("{at}: user `{user}` is given twice"));
            }
        }
        Ok(Passwords { users })
    }

    /// Reads a password file.
    pub fn load(path: &Path) -> Result<Passwords, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the password file {}: {e}", path.display()))?;
        Passwords::parse(&text, &path.display().to_string())
    }

    /// Whether `user` exists and `password` is theirs (slow: argon2).
    pub fn check(&self, user: &str, password: &str) -> bool {
        match self.users.get(user) {
            Some(hash) => verify_password(hash, password),
            None => {
                // As slow as a real check, so that a wrong user name cannot
                // be told from a wrong password by the time it takes.
                let _ = hash_password(password);
                false
            }
        }
    }

    pub fn len(&self) -> usize {
        self.users.len()
    }

    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// The file's text, one line a user.
    pub fn to_text(&self) -> String {
        let mut text = String::from(
            "# chessclock-hall arbiters: USER:argon2id hash (chessclock-hall passwd FILE USER)\n",
        );
        for (user, hash) in &self.users {
            text.push_str(&format!("{user}:{hash}\n"));
        }
        text
    }
}

/// Adds `user` to the password file at `path` (made when missing) or
/// replaces their password; the file is written whole to a temporary file
/// beside it, then renamed (never left half-written), mode 0600.
pub fn set_password(path: &Path, user: &str, password: &str) -> Result<(), String> {
    check_user(user)?;
    if password.is_empty() {
        return Err("the password is empty".into());
    }
    let mut passwords = match std::fs::read_to_string(path) {
        Ok(text) => Passwords::parse(&text, &path.display().to_string())?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Passwords::default(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    passwords
        .users
        .insert(user.to_owned(), hash_password(password)?);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot write beside {}: {e}", path.display()))?;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    file.write_all(passwords.to_text().as_bytes())
        .and_then(|()| file.as_file().sync_all())
        .and_then(|()| {
            file.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o600))
        })
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    file.persist(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// A random token: 32 bytes as 64 hex digits.
fn token() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A logged-in arbiter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    pub user: String,
    /// Every POST of the session carries it (`X-CSRF-Token`).
    pub csrf: String,
    expires: Instant,
}

/// The sessions, by cookie token. Times are given by the caller (`now`),
/// so that expiry is tested without waiting.
pub struct Sessions {
    lifetime: Duration,
    sessions: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    pub fn new(lifetime: Duration) -> Sessions {
        Sessions {
            lifetime,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // Each change is one insert or remove: a poisoned map is whole.
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn lifetime(&self) -> Duration {
        self.lifetime
    }

    /// A new session for `user`: its cookie token and the session.
    pub fn open(&self, user: &str, now: Instant) -> (String, Session) {
        let session = Session {
            user: user.to_owned(),
            csrf: token(),
            expires: now + self.lifetime,
        };
        let cookie = token();
        let mut map = self.map();
        map.retain(|_, s| s.expires > now);
        map.insert(cookie.clone(), session.clone());
        (cookie, session)
    }

    /// The live session of a cookie token (an expired one is forgotten).
    pub fn get(&self, cookie: &str, now: Instant) -> Option<Session> {
        let mut map = self.map();
        match map.get(cookie) {
            Some(session) if session.expires > now => Some(session.clone()),
            Some(_) => {
                map.remove(cookie);
                None
            }
            None => None,
        }
    }

    /// Ends a session (logout).
    pub fn close(&self, cookie: &str) {
        self.map().remove(cookie);
    }
}

/// Failed logins: after `limit` failures of one key (a client address, or
/// a user name) within `window`, that key is refused until the window of
/// its first failure has passed.
pub struct Failures {
    limit: usize,
    window: Duration,
    seen: Mutex<HashMap<String, Vec<Instant>>>,
}

impl Failures {
    pub fn new(limit: usize, window: Duration) -> Failures {
        Failures {
            limit,
            window,
            seen: Mutex::new(HashMap::new()),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Instant>>> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How long `key` must wait before it may try again (`None`: it may
    /// try now).
    pub fn blocked(&self, key: &str, now: Instant) -> Option<Duration> {
        let mut map = self.map();
        let times = map.get_mut(key)?;
        times.retain(|t| now.saturating_duration_since(*t) < self.window);
        if times.len() < self.limit {
            return None;
        }
        times.first().map(|first| {
            self.window
                .saturating_sub(now.saturating_duration_since(*first))
        })
    }

    pub fn fail(&self, key: &str, now: Instant) {
        let mut map = self.map();
        // Bounded: stale keys go when the map grows.
        if map.len() > 10_000 {
            map.retain(|_, times| {
                times
                    .last()
                    .is_some_and(|t| now.saturating_duration_since(*t) < self.window)
            });
        }
        map.entry(key.to_owned()).or_default().push(now);
    }

    pub fn clear(&self, key: &str) {
        self.map().remove(key);
    }
}

/// The shortest and longest hall screen token taken.
pub const SCREEN_TOKEN_LENGTH: std::ops::RangeInclusive<usize> = 16..=256;

/// The hall screens' read tokens (`--screen-tokens FILE`): one a line
/// (`#` comments and blank lines skipped), each 16 to 256 letters, digits,
/// `-`, `_`, `.` or `~` (it goes in a page's address as `?token=`). A
/// token gives live data to read, never a command.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ScreenTokens {
    tokens: Vec<String>,
}

impl std::fmt::Debug for ScreenTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the tokens themselves.
        write!(f, "ScreenTokens({} tokens)", self.tokens.len())
    }
}

impl ScreenTokens {
    /// Reads a token file's text (`what` names it in errors).
    pub fn parse(text: &str, what: &str) -> Result<ScreenTokens, String> {
        let mut tokens = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fine = SCREEN_TOKEN_LENGTH.contains(&line.len())
                && line
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b));
            if !fine {
                return Err(format!(
                    "{what}:{}: a screen token is {} to {} letters, digits, `-`, `_`, `.` or `~` \
                     (make one with `head -c 24 /dev/urandom | base64 | tr +/ -_`)",
                    number + 1,
                    SCREEN_TOKEN_LENGTH.start(),
                    SCREEN_TOKEN_LENGTH.end()
                ));
            }
            tokens.push(line.to_owned());
        }
        Ok(ScreenTokens { tokens })
    }

    /// Reads a token file.
    pub fn load(path: &Path) -> Result<ScreenTokens, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the screen token file {}: {e}", path.display()))?;
        ScreenTokens::parse(&text, &path.display().to_string())
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Whether `given` is one of the tokens (each compared in full: the
    /// time taken does not tell how much of a token was right).
    pub fn check(&self, given: &str) -> bool {
        self.tokens
            .iter()
            .fold(false, |found, token| found | same(token, given))
    }
}

/// Whether two strings are equal, compared without stopping at the first
/// byte that differs.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn a_password_file_keeps_hashes_only_and_checks_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("arbiters");
        set_password(&file, "ann", "s3cret horse").unwrap();
        set_password(&file, "bob", "other").unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("ann:$argon2id$"), "{text}");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let passwords = Passwords::load(&file).unwrap();
        assert_eq!(passwords.len(), 2);
        assert!(passwords.check("ann", "s3cret horse"));
        assert!(!passwords.check("ann", "s3cret horsE"));
        assert!(!passwords.check("ann", "other"));
        assert!(!passwords.check("carl", "other"));
        // Replacing a password: the old one no longer works.
        set_password(&file, "ann", "new one").unwrap();
        let passwords = Passwords::load(&file).unwrap();
        assert_eq!(passwords.len(), 2);
        assert!(passwords.check("ann", "new one"));
        assert!(!passwords.check("ann", "s3cret horse"));
        assert!(passwords.check("bob", "other"));
    }

    #[test]
    fn bad_password_files_and_names_are_refused_with_their_line() {
        for (text, needle) in [
            ("ann\n", ":1: expected USER:HASH"),
            (
                "# c\n\nann:plain-text-password\n",
                ":3: the hash of `ann` is not a PHC string",
            ),
            (
                "a b:$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA\n",
                "no `:`, spaces",
            ),
        ] {
            let error = Passwords::parse(text, "f").unwrap_err();
            assert!(error.contains(needle), "{text:?}: {error}");
        }
        let hash = hash_password("x").unwrap();
        let twice = format!("ann:{hash}\nann:{hash}\n");
        assert!(Passwords::parse(&twice, "f").unwrap_err().contains("twice"));
        assert!(check_user("").is_err());
        assert!(check_user(&"x".repeat(65)).is_err());
        assert!(check_user("ann:1").is_err());
        assert!(check_user("Ann.Arbiter").is_ok());
        let dir = tempfile::tempdir().unwrap();
        assert!(set_password(&dir.path().join("f"), "ann", "").is_err());
        assert!(!verify_password("garbage", "x"));
    }

    #[test]
    fn sessions_expire_and_log_out() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let t0 = Instant::now();
        let (cookie, session) = sessions.open("ann", t0);
        let (other, _) = sessions.open("bob", t0);
        assert_eq!(cookie.len(), 64);
        assert_ne!(cookie, other);
        assert_ne!(session.csrf, cookie);
        let seen = sessions.get(&cookie, t0 + Duration::from_secs(59)).unwrap();
        assert_eq!(seen.user, "ann");
        assert_eq!(seen.csrf, session.csrf);
        assert!(sessions.get("nope", t0).is_none());
        assert!(sessions
            .get(&cookie, t0 + Duration::from_secs(60))
            .is_none());
        // Once expired it is gone, even at an earlier instant.
        assert!(sessions.get(&cookie, t0).is_none());
        assert!(sessions.get(&other, t0).is_some());
        sessions.close(&other);
        assert!(sessions.get(&other, t0).is_none());
    }

    #[test]
    fn failures_are_limited_per_key_within_the_window() {
        let failures = Failures::new(3, Duration::from_secs(60));
        let t0 = Instant::now();
        for i in 0..3 {
            assert_eq!(failures.blocked("1.2.3.4", t0), None);
            failures.fail("1.2.3.4", t0 + Duration::from_secs(i));
        }
        assert_eq!(
            failures.blocked("1.2.3.4", t0 + Duration::from_secs(10)),
            Some(Duration::from_secs(50))
        );
        assert_eq!(failures.blocked("5.6.7.8", t0), None);
        // The first failure leaves the window: one more try.
        assert_eq!(
            failures.blocked("1.2.3.4", t0 + Duration::from_secs(60)),
            None
        );
        failures.clear("1.2.3.4");
        assert_eq!(failures.blocked("1.2.3.4", t0), None);
    }

    #[test]
    fn screen_tokens_are_read_checked_and_never_shown() {
        let good = "screen-0123456789abcdef";
        let tokens = ScreenTokens::parse(&format!("# hall screens\n\n{good}\n"), "f").unwrap();
        assert_eq!(tokens.len(), 1);
        assert!(tokens.check(good));
        assert!(!tokens.check("screen-0123456789abcdeF"));
        assert!(!tokens.check("screen-0123456789abcde"));
        assert!(!tokens.check(""));
        assert!(!format!("{tokens:?}").contains(good));
        for bad in [
            "short",
            "has space in the middle of it",
            "quote\"0123456789abcdef",
        ] {
            let error = ScreenTokens::parse(bad, "f").unwrap_err();
            assert!(
                error.starts_with("f:1: a screen token is 16 to 256"),
                "{error}"
            );
        }
        assert!(ScreenTokens::default().is_empty());
        assert!(!ScreenTokens::default().check(good));
    }
}
