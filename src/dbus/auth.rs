//! Who may change a clock: root, or a member of the configured admin group.
//!
//! The caller's identity comes from the bus (`GetConnectionCredentials`) or,
//! on a peer-to-peer connection, from the socket itself. The decision is a
//! pure function of the credentials and the group's id, so it is tested
//! without any bus.

use zbus::message::Header;
use zbus::Connection;

use super::error::Error;
use crate::control::Caller;

/// What the daemon knows about a caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    pub uid: u32,
    /// Primary and supplementary groups, when the bus could tell them.
    pub groups: Option<Vec<u32>>,
}

/// The policy: root, or membership of `admin_group`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    pub admin_group: String,
}

impl Policy {
    /// Decides from credentials alone. `group_id` is the admin group's id, or
    /// `None` when the group does not exist on this system (then only root
    /// may change clocks). `lookup_groups` supplies the groups when the bus
    /// did not report them.
    pub fn decide(
        &self,
        credentials: &Credentials,
        group_id: Option<u32>,
        lookup_groups: impl FnOnce(u32) -> Vec<u32>,
    ) -> Result<Caller, Error> {
        let caller = Caller {
            uid: Some(credentials.uid),
            name: account_name(credentials.uid),
        };
        if credentials.uid == 0 {
            return Ok(caller);
        }
        let Some(gid) = group_id else {
            return Err(Error::NotPermitted(format!(
                "only root may change clocks: the admin group `{}` does not exist on this \
                 system; create it (groupadd {}) and add the arbiters to it, or use sudo",
                self.admin_group, self.admin_group
            )));
        };
        let member = match &credentials.groups {
            Some(groups) => groups.contains(&gid),
            None => lookup_groups(credentials.uid).contains(&gid),
        };
        if member {
            Ok(caller)
        } else {
            Err(Error::NotPermitted(format!(
                "uid {} may read but not change clocks: changing needs root or membership of \
                 group `{}` (usermod -aG {} USER, then log in again), or use sudo",
                credentials.uid, self.admin_group, self.admin_group
            )))
        }
    }
}

/// The id of a group by name, from the system's group database.
pub fn group_id(name: &str) -> Option<u32> {
    nix::unistd::Group::from_name(name)
        .ok()
        .flatten()
        .map(|group| group.gid.as_raw())
}

/// The account name of `uid` (recorded with every change it makes), when
/// the system knows one.
pub fn account_name(uid: u32) -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|user| user.name)
}

/// All groups of a user (primary and supplementary) from the system's
/// databases; empty when the user is unknown.
pub fn groups_of_uid(uid: u32) -> Vec<u32> {
    let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) else {
        return Vec::new();
    };
    let Ok(name) = std::ffi::CString::new(user.name) else {
        return Vec::new();
    };
    nix::unistd::getgrouplist(&name, user.gid)
        .map(|groups| groups.into_iter().map(|gid| gid.as_raw()).collect())
        .unwrap_or_default()
}

/// The credentials of the sender of the message with `header`.
pub async fn caller_credentials(
    connection: &Connection,
    header: &Header<'_>,
) -> Result<Credentials, Error> {
    let (uid, groups) = if connection.is_bus() {
        let sender = header.sender().ok_or_else(|| {
            Error::Internal("the bus delivered a call without a sender; try again".into())
        })?;
        let proxy = zbus::fdo::DBusProxy::builder(connection)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .map_err(|e| Error::Internal(format!("cannot ask the bus who called: {e}")))?;
        let credentials = proxy
            .get_connection_credentials(sender.clone().into())
            .await
            .map_err(|e| Error::Internal(format!("cannot ask the bus who called: {e}")))?;
        (
            credentials.unix_user_id(),
            credentials.unix_group_ids().cloned(),
        )
    } else {
        let credentials = connection
            .peer_creds()
            .await
            .map_err(|e| Error::Internal(format!("cannot read the peer's credentials: {e}")))?;
        (
            credentials.unix_user_id(),
            credentials.unix_group_ids().cloned(),
        )
    };
    let uid = uid.ok_or_else(|| {
        Error::NotPermitted("the bus did not report your user id, so no change is allowed".into())
    })?;
    Ok(Credentials { uid, groups })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy {
            admin_group: "chessclock".into(),
        }
    }

    fn no_lookup(_: u32) -> Vec<u32> {
        panic!("groups were reported, no lookup expected")
    }

    #[test]
    fn root_may_change_even_without_the_group() {
        let creds = Credentials {
            uid: 0,
            groups: Some(vec![0]),
        };
        let caller = policy().decide(&creds, None, no_lookup).unwrap();
        assert_eq!(caller.uid, Some(0));
        // Changes are recorded with the account's name too.
        assert_eq!(caller.name, account_name(0));
    }

    #[test]
    fn a_member_may_change_and_is_recorded_by_uid() {
        let creds = Credentials {
            uid: 1001,
            groups: Some(vec![100, 990]),
        };
        let caller = policy().decide(&creds, Some(990), no_lookup).unwrap();
        assert_eq!(caller.uid, Some(1001));
        assert_eq!(caller.name, account_name(1001));
    }

    #[test]
    fn a_non_member_is_refused_with_a_hint() {
        let creds = Credentials {
            uid: 1002,
            groups: Some(vec![100]),
        };
        match policy().decide(&creds, Some(990), no_lookup) {
            Err(Error::NotPermitted(message)) => {
                assert!(message.contains("usermod -aG chessclock"), "{message}")
            }
            other => panic!("expected NotPermitted, got {other:?}"),
        }
    }

    #[test]
    fn missing_group_list_is_looked_up() {
        let creds = Credentials {
            uid: 1003,
            groups: None,
        };
        assert!(policy().decide(&creds, Some(990), |_| vec![990]).is_ok());
        assert!(policy().decide(&creds, Some(990), |_| vec![5]).is_err());
    }

    #[test]
    fn without_the_group_only_root_may_change() {
        let creds = Credentials {
            uid: 1004,
            groups: Some(vec![990]),
        };
        assert!(matches!(
            policy().decide(&creds, None, no_lookup),
            Err(Error::NotPermitted(_))
        ));
    }
}
