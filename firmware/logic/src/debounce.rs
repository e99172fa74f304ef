//! Lever and button debouncing that keeps the instant of the first edge.
//!
//! SPEC.md section 9.1: a press is stamped with the device clock at its
//! **first contact edge**; debouncing only decides *whether* it was a press.
//! So the stamp never depends on the debounce time:
//!
//! * the pin-change interrupt (or whatever sees the edge first) calls
//!   [`Debouncer::edge`] with the clock read at that moment; the first edge
//!   after a settled state opens a window and is remembered as the stamp;
//! * every later edge (contact bounce) only moves the window's end;
//! * once the line has been quiet for [`DEBOUNCE_US`], a [`Debouncer::sample`]
//!   of the level decides: a level other than the settled one is a
//!   transition, reported with the **first** edge's instant; the settled
//!   level again means it was a bounce or a spike, and nothing is reported.
//!
//! A 5 ms debounce therefore delays when the press is *sent* by 5 ms after
//! the last bounce, never when it is *accounted*: the host receives the
//! first-edge instant and maps it to its own clock (SPEC.md 9.2).
//!
//! Pure: no clock, no pins. [`Buttons`] holds the three debouncers of a
//! button unit and reports settled transitions in the order of their first
//! edges (SPEC.md 9.1: events are numbered in that order).

use chessclock_protocol::Button;

/// Quiet time after the last edge before the level is trusted (the SPEC
/// recommends 5 ms, at most 10 ms).
pub const DEBOUNCE_US: u64 = 5_000;

/// A settled transition of one button.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ButtonEvent {
    pub button: Button,
    /// `true`: pressed (contact closed); `false`: released.
    pub pressed: bool,
    /// Device clock at the first edge of the transition, µs.
    pub at_us: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Window {
    first_edge_us: u64,
    last_edge_us: u64,
}

/// One contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Debouncer {
    settled: bool,
    window: Option<Window>,
}

impl Debouncer {
    /// A contact whose level at power-up is `pressed` (a lever that is down
    /// at power-up reports no press for it).
    pub const fn new(pressed: bool) -> Debouncer {
        Debouncer {
            settled: pressed,
            window: None,
        }
    }

    /// The level last settled.
    pub fn settled(&self) -> bool {
        self.settled
    }

    /// The line changed at `at_us` (read in the interrupt, before anything
    /// else). Edges arriving out of order are taken as they come; the first
    /// of a window stays its stamp.
    pub fn edge(&mut self, at_us: u64) {
        match &mut self.window {
            None => {
                self.window = Some(Window {
                    first_edge_us: at_us,
                    last_edge_us: at_us,
                })
            }
            Some(w) => w.last_edge_us = w.last_edge_us.max(at_us),
        }
    }

    /// The level read at `now_us`. Returns the settled transition, if this
    /// sample decides one.
    pub fn sample(&mut self, pressed: bool, now_us: u64) -> Option<(bool, u64)> {
        if self.window.is_none() && pressed != self.settled {
            // A change whose edge nobody saw (interrupt re-armed too late):
            // its stamp is the first instant it was seen.
            self.edge(now_us);
        }
        let w = self.window?;
        if now_us < w.last_edge_us.saturating_add(DEBOUNCE_US) {
            return None;
        }
        self.window = None;
        if pressed == self.settled {
            return None; // bounced back: a spike, not a press
        }
        self.settled = pressed;
        Some((pressed, w.first_edge_us))
    }

    /// When [`Self::sample`] must next be called to decide an open window.
    pub fn deadline(&self) -> Option<u64> {
        self.window
            .map(|w| w.last_edge_us.saturating_add(DEBOUNCE_US))
    }
}

/// The buttons of a unit, by wire code: 0 left, 1 right, 2 arbiter.
pub const BUTTONS: [Button; 3] = [Button::Left, Button::Right, Button::Arbiter];

/// The debouncers of a button unit's left, right and arbiter buttons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buttons {
    contacts: [Debouncer; 3],
}

impl Buttons {
    /// `pressed[i]`: the level of button `i` (left, right, arbiter) at
    /// power-up.
    pub const fn new(pressed: [bool; 3]) -> Buttons {
        Buttons {
            contacts: [
                Debouncer::new(pressed[0]),
                Debouncer::new(pressed[1]),
                Debouncer::new(pressed[2]),
            ],
        }
    }

    /// An edge of button `index` at `at_us`.
    pub fn edge(&mut self, index: usize, at_us: u64) {
        if let Some(c) = self.contacts.get_mut(index) {
            c.edge(at_us);
        }
    }

    /// Samples every button's level at `now_us`; returns the transitions
    /// this decides, in the order of their first edges.
    pub fn sample(&mut self, pressed: [bool; 3], now_us: u64) -> Settled {
        let mut out = Settled::default();
        for (i, (c, level)) in self.contacts.iter_mut().zip(pressed).enumerate() {
            if let Some((pressed, at_us)) = c.sample(level, now_us) {
                out.push(ButtonEvent {
                    button: BUTTONS.get(i).copied().unwrap_or(Button::Left),
                    pressed,
                    at_us,
                });
            }
        }
        out.sort();
        out
    }

    /// The earliest instant at which [`Self::sample`] decides something.
    pub fn deadline(&self) -> Option<u64> {
        self.contacts.iter().filter_map(Debouncer::deadline).min()
    }
}

/// Up to three settled transitions, oldest first edge first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settled {
    events: [Option<ButtonEvent>; 3],
    len: usize,
}

impl Settled {
    fn push(&mut self, e: ButtonEvent) {
        if let Some(slot) = self.events.get_mut(self.len) {
            *slot = Some(e);
            self.len += 1;
        }
    }

    fn sort(&mut self) {
        // Three entries at most: a tiny insertion sort, stable.
        for i in 1..self.len {
            let mut j = i;
            while j > 0 {
                let (a, b) = (self.events[j - 1], self.events[j]);
                match (a, b) {
                    (Some(x), Some(y)) if y.at_us < x.at_us => {
                        self.events.swap(j - 1, j);
                        j -= 1;
                    }
                    _ => break,
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = ButtonEvent> + '_ {
        self.events.iter().take(self.len).flatten().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bouncing_press_is_stamped_at_its_first_edge() {
        let mut d = Debouncer::new(false);
        // Contact closes at 1000 µs and bounces for 1.2 ms.
        for t in [1_000, 1_300, 1_700, 2_200] {
            d.edge(t);
        }
        assert_eq!(d.deadline(), Some(2_200 + DEBOUNCE_US));
        assert_eq!(d.sample(true, 2_200 + DEBOUNCE_US - 1), None);
        assert_eq!(d.sample(true, 2_200 + DEBOUNCE_US), Some((true, 1_000)));
        assert!(d.settled());
        assert_eq!(d.deadline(), None);
    }

    #[test]
    fn a_spike_shorter_than_the_debounce_is_no_press() {
        let mut d = Debouncer::new(false);
        d.edge(10_000);
        d.edge(10_400);
        assert_eq!(d.sample(false, 10_400 + DEBOUNCE_US), None);
        assert!(!d.settled());
        assert_eq!(d.deadline(), None);
    }

    #[test]
    fn a_missed_edge_is_caught_by_the_sample() {
        let mut d = Debouncer::new(false);
        assert_eq!(d.sample(true, 50_000), None);
        assert_eq!(d.sample(true, 50_000 + DEBOUNCE_US), Some((true, 50_000)));
    }

    #[test]
    fn release_after_press_is_a_second_transition() {
        let mut d = Debouncer::new(false);
        d.edge(0);
        assert_eq!(d.sample(true, DEBOUNCE_US), Some((true, 0)));
        d.edge(80_000);
        d.edge(80_500);
        assert_eq!(d.sample(false, 90_000), Some((false, 80_000)));
    }

    #[test]
    fn buttons_settling_together_come_out_in_first_edge_order() {
        let mut b = Buttons::new([false; 3]);
        b.edge(1, 1_000); // right first
        b.edge(0, 1_200); // then left
        b.edge(1, 3_000); // right bounces longer
        let out = b.sample([true, true, false], 10_000);
        let order: std::vec::Vec<_> = out.iter().map(|e| (e.button, e.at_us)).collect();
        assert_eq!(order, [(Button::Right, 1_000), (Button::Left, 1_200)]);
        assert_eq!(b.deadline(), None);
    }
}
