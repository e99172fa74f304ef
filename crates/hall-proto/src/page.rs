//! What keeps every hall message small enough for the broker and for every
//! client: the largest payload ([`MAX_PAYLOAD`]) and the pages of a
//! `history` read ([`history_page`]).
//!
//! Promises: pure; a page always holds at least one row when any is left
//! at `from`, so paging through a history always ends, and every row of it
//! comes in exactly one page.

use serde_json::Value;

/// The largest payload a hall party publishes, and takes: a daemon cuts a
/// `history` read into pages and never publishes a larger message; a
/// message that comes larger is dropped and counted. Half the broker's
/// `max_packet_size` (1 MiB, `scripts/hall-credentials`), so a topic and
/// the headers always fit beside it.
pub const MAX_PAYLOAD: usize = 512 * 1024;

/// The most bytes of rows in one page of a `history` reply (the game's
/// header beside them is bounded by the core's limits: 64 tags of at most
/// 255 characters).
pub const PAGE_BYTES: usize = 128 * 1024;

/// Which part of a history a `history` command asks for: the rows from
/// index `from` (0-based), at most `limit` of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HistoryPage {
    pub from: usize,
    pub limit: Option<usize>,
}

/// Cuts a `history` result (`{...the game's header, "events": [rows]}`)
/// to one page: the rows from `page.from`, at most `page.limit` of them
/// and at most `budget` bytes of them (one row at least, whatever its
/// size), and adds `from`, `next` (the index to ask for next; `null` when
/// this page ends the history) and `total` (the history's rows). A result
/// without an `events` array is left as it is.
pub fn history_page(result: &mut Value, page: HistoryPage, budget: usize) {
    let Some(object) = result.as_object_mut() else {
        return;
    };
    let Some(Value::Array(events)) = object.get_mut("events") else {
        return;
    };
    let all = std::mem::take(events);
    let total = all.len();
    let from = page.from.min(total);
    let limit = page.limit.unwrap_or(usize::MAX);
    let mut rows = Vec::new();
    let mut bytes = 0usize;
    for row in all.into_iter().skip(from) {
        if rows.len() >= limit {
            break;
        }
        // The row as it goes out, and its comma.
        let size = serde_json::to_vec(&row).map_or(0, |text| text.len()) + 1;
        if !rows.is_empty() && bytes.saturating_add(size) > budget {
            break;
        }
        bytes = bytes.saturating_add(size);
        rows.push(row);
    }
    let end = from + rows.len();
    *events = rows;
    object.insert("from".into(), from.into());
    object.insert(
        "next".into(),
        if end < total { end.into() } else { Value::Null },
    );
    object.insert("total".into(), total.into());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use serde_json::json;

    fn history(rows: usize) -> Value {
        let events: Vec<Value> = (0..rows)
            .map(|i| json!({"seq": i + 1, "do": "press", "note": "x".repeat(400)}))
            .collect();
        json!({"board": "b1", "control": "G/90", "events": events})
    }

    /// Issue 29: a history of 2,200 rows is about 1 MB: every row comes,
    /// once, in order, in pages each below the budget.
    #[test]
    fn paging_a_long_history_gives_every_row_once_in_small_pages() {
        let whole = history(2_200);
        assert!(serde_json::to_vec(&whole).unwrap().len() > 900_000);
        let mut seen = Vec::new();
        let mut from = 0;
        let mut pages = 0;
        loop {
            let mut page = whole.clone();
            history_page(&mut page, HistoryPage { from, limit: None }, PAGE_BYTES);
            assert!(serde_json::to_vec(&page).unwrap().len() < PAGE_BYTES + 1024);
            assert_eq!(page["total"], 2_200);
            assert_eq!(page["from"], from);
            assert_eq!(page["board"], "b1", "the header in every page");
            seen.extend(page["events"].as_array().unwrap().iter().cloned());
            pages += 1;
            match page["next"].as_u64() {
                Some(next) => from = usize::try_from(next).unwrap(),
                None => break,
            }
        }
        assert!(pages >= 8, "{pages} pages");
        assert_eq!(seen, whole["events"].as_array().unwrap().clone());
    }

    #[test]
    fn a_limit_a_short_history_and_a_row_beyond_the_budget() {
        let mut page = history(10);
        history_page(
            &mut page,
            HistoryPage {
                from: 2,
                limit: Some(3),
            },
            PAGE_BYTES,
        );
        assert_eq!(page["events"].as_array().unwrap().len(), 3);
        assert_eq!(page["events"][0]["seq"], 3);
        assert_eq!(page["next"], 5);

        let mut page = history(4);
        history_page(&mut page, HistoryPage::default(), PAGE_BYTES);
        assert_eq!(page["events"].as_array().unwrap().len(), 4);
        assert_eq!(page["next"], Value::Null);
        assert_eq!(page["from"], 0);

        // One row larger than the budget still comes, alone.
        let mut page = history(3);
        history_page(&mut page, HistoryPage::default(), 100);
        assert_eq!(page["events"].as_array().unwrap().len(), 1);
        assert_eq!(page["next"], 1);

        // Past the end: no rows, no next.
        let mut page = history(3);
        history_page(
            &mut page,
            HistoryPage {
                from: 9,
                limit: None,
            },
            PAGE_BYTES,
        );
        assert!(page["events"].as_array().unwrap().is_empty());
        assert_eq!(page["from"], 3);
        assert_eq!(page["next"], Value::Null);

        // Not a history: left as it is.
        let mut other = json!({"white": 1});
        history_page(&mut other, HistoryPage::default(), PAGE_BYTES);
        assert_eq!(other, json!({"white": 1}));
    }
}
