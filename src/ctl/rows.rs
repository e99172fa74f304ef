//! The rows `chessclockctl watch` shows, from any source: a board's State
//! view as of some age, or a source that cannot be read. The daemons over
//! D-Bus (`watch`) and a hall's hub (`hall`) both make
//! them; a leaf, so neither imports the other for them.
//!
//! Promises: pure; [`advance`] moves a view forward exactly as the daemon's
//! clock would have run (delay first, hourglass, a scheduled start's
//! countdown), saturating, never panicking.

use chessclock_core::engine::Side;
use chessclock_core::views::StateView;

/// One line of the view: a board of a source, or a source that cannot be
/// read.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The host (empty for the local daemon).
    pub source: String,
    pub board: String,
    /// The board's State view, as of `age_ms` ago.
    pub view: Option<StateView>,
    pub age_ms: i64,
    /// Why the source cannot be read.
    pub error: Option<String>,
}

/// The view advanced by `ms` of the running clock (and the countdown to a
/// scheduled start), as the daemon would show it then.
pub fn advance(view: &StateView, ms: i64) -> StateView {
    let mut view = view.clone();
    let ms = ms.max(0);
    view.t = view.t.saturating_add(ms);
    if let Some(side) = view.running {
        let own = match side {
            Side::White => &mut view.white,
            Side::Black => &mut view.black,
        };
        let delay = own.delay_left_ms.unwrap_or(0).max(0);
        own.used_ms = own.used_ms.saturating_add(ms);
        if let Some(remaining) = own.remaining_ms.as_mut() {
            *remaining = remaining.saturating_sub((ms - delay).max(0));
        }
        if let Some(delay_left) = own.delay_left_ms.as_mut() {
            *delay_left = (*delay_left - ms).max(0);
        }
        if view.hourglass {
            let other = match side {
                Side::White => &mut view.black,
                Side::Black => &mut view.white,
            };
            if let Some(remaining) = other.remaining_ms.as_mut() {
                *remaining = remaining.saturating_add(ms);
            }
        }
    }
    view
}
