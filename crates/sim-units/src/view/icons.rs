//! The display icons: their names (scripts, logs) and how the view shows
//! them.

use chessclock_protocol::Icons;

use super::Tone;

/// Icon names (scripts, logs, the view), in bit order.
pub const ICON_NAMES: [(Icons, &str); 9] = [
    (Icons::FLAG, "flag"),
    (Icons::FIRST_FLAG, "first-flag"),
    (Icons::STAGE_FLAG, "stage-flag"),
    (Icons::RUNNING, "running"),
    (Icons::PAUSED, "paused"),
    (Icons::LINK_LOST, "link-lost"),
    (Icons::LOW_POWER, "low-power"),
    (Icons::BONUS, "bonus"),
    (Icons::ARBITER, "arbiter"),
];

pub fn icon_names(icons: Icons) -> Vec<&'static str> {
    ICON_NAMES
        .iter()
        .filter(|(icon, _)| icons.contains(*icon))
        .map(|(_, name)| *name)
        .collect()
}

pub fn icon_by_name(name: &str) -> Option<Icons> {
    ICON_NAMES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(icon, _)| *icon)
}

/// How the icons look on the simulated display.
pub(super) fn icon_label(icon: Icons) -> (&'static str, Tone) {
    match icon {
        Icons::FLAG => ("⚑ FLAG", Tone::Bad),
        Icons::FIRST_FLAG => ("⚑ FIRST", Tone::Bad),
        Icons::STAGE_FLAG => ("⚐ STAGE", Tone::Warn),
        Icons::RUNNING => ("▶ RUNNING", Tone::Good),
        Icons::PAUSED => ("‖ PAUSED", Tone::Warn),
        Icons::LINK_LOST => ("✖ LINK LOST", Tone::Bad),
        Icons::LOW_POWER => ("▾ LOW POWER", Tone::Warn),
        Icons::BONUS => ("+ BONUS", Tone::Normal),
        Icons::ARBITER => ("☎ ARBITER", Tone::Warn),
        _ => ("?", Tone::Dim),
    }
}
