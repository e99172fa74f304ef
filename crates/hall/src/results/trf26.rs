//! TRF26 (FIDE Handbook C.02.03, annex A, applied from 1 September 2025)
//! and TRF16 from a round's results file (pure, no I/O).
//!
//! TRF26 is a superset of TRF16: the `001` player lines are the same, and
//! new records carry what TRF16 left to prose. What is written here:
//! * `142` (number of rounds, value from column 5): from the file's own
//!   `142`, else from JaVaFo's `XXR` record, else not written (the hub
//!   does not know how many rounds an event has);
//! * `222` (the encoded time control, from column 5): periods joined by
//!   `:`, each `M/S+I` (`M` moves in `S` seconds, `I` seconds added a
//!   move), `M/S`, `S+I` or `S` (e.g. `40/6000+30:900+30`, `5400+30`),
//!   from the round's control when the file has none and the control is
//!   expressible: stages of whole seconds with a Fischer increment or
//!   none. A delay (US or Bronstein), an hourglass, byo-yomi or Canadian
//!   overtime has no TRF26 code and no `222` is written. A last stage with
//!   a move count repeats (as in the PGN `TimeControl` tag); TRF26 does not
//!   say how a repeating period is written, so that reading is PGN's;
//! * `240` (a bye: its type in column 5, `F` full point, `H` half point,
//!   `Z` zero points; the round in columns 7-9; the players' numbers from
//!   column 11, four columns each, a space between): one record a type for
//!   the round's `F`/`H`/`Z` byes not already declared by a `240` of the
//!   file. A pairing-allocated bye (`U`) has no `240` for individuals: it
//!   is in the `001` line only (`0000 - U`).
//!
//! Not written: `192` (the encoded type of tournament: its code table is
//! not in this repository, and the pairings file, which the pairing
//! program wrote, carries it when it knows it), `132` (round dates),
//! `162` (scoring: the default is assumed). Every record of the file is
//! kept as it was; the new ones go before the first `001` line (`142`,
//! `222`) and at the end (`240`), with the file's own line ending.
//!
//! TRF16 ([`trf16`]) is the same file without the records TRF26 added
//! (codes `142` up to `362`, `801`, `802`, `###` comments): a TRF16 reader
//! (JaVaFo, older Swiss-Manager and Vega) reads it as before. `XXR` and
//! the other `XX?` extensions stay.

use chessclock_core::time::SECOND;
use chessclock_core::timecontrol::{self, Bonus, TimeControl};

use crate::pairings::Bye;

/// The record codes TRF26 added to TRF16.
const TRF26_ONLY: [&str; 21] = [
    "142", "152", "162", "172", "182", "192", "202", "212", "222", "240", "250", "260", "299",
    "300", "310", "320", "330", "352", "362", "801", "802",
];

/// The TRF26 `222` code of a control notation, when it has one (see the
/// module's documentation).
pub fn encode_control(notation: &str) -> Option<String> {
    let TimeControl::Stages(stages) = timecontrol::parse(notation).ok()? else {
        return None;
    };
    let seconds = |micros: i64| (micros % SECOND == 0 && micros >= 0).then_some(micros / SECOND);
    let mut periods = Vec::new();
    for stage in &stages {
        let time = seconds(stage.time)?;
        let mut period = match stage.moves {
            Some(moves) => format!("{moves}/{time}"),
            None => time.to_string(),
        };
        match stage.bonus {
            Bonus::None => {}
            Bonus::Increment(increment) => {
                period.push_str(&format!("+{}", seconds(increment)?));
            }
            Bonus::Delay(_) | Bonus::Bronstein(_) => return None,
        }
        periods.push(period);
    }
    (!periods.is_empty()).then(|| periods.join(":"))
}

/// The line ending a TRF text uses (`\r\n` if any line has one).
fn ending(text: &str) -> &'static str {
    if text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

fn code(line: &str) -> &str {
    line.get(..3).unwrap_or(line)
}

/// `text` without the records TRF26 added (see the module's
/// documentation).
pub fn trf16(text: &str) -> String {
    text.split_inclusive('\n')
        .filter(|line| !line.starts_with("###") && !TRF26_ONLY.contains(&code(line)))
        .collect()
}

/// The file's `240` declarations: (type, round, player).
fn declared_byes(text: &str) -> Vec<(char, u32, u32)> {
    let mut declared = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("240")) {
        let chars: Vec<char> = line.trim_end().chars().collect();
        let kind = chars.get(4).map(char::to_ascii_uppercase).unwrap_or(' ');
        let round: Option<u32> = chars
            .get(6..9.min(chars.len()))
            .and_then(|c| c.iter().collect::<String>().trim().parse().ok());
        let Some(round) = round else { continue };
        let players = chars
            .get(10..)
            .unwrap_or_default()
            .iter()
            .collect::<String>();
        for player in players.split_whitespace() {
            if let Ok(player) = player.parse() {
                declared.push((kind, round, player));
            }
        }
    }
    declared
}

/// `text` (a round's results, TRF16 or TRF26) as TRF26: `142`, `222` and
/// `240` added where the file lacks them (see the module's
/// documentation). `byes` are round `round`'s; `control` the round's
/// control notation.
pub fn trf26(text: &str, round: u32, byes: &[Bye], control: Option<&str>) -> String {
    let end = ending(text);
    let mut header = Vec::new();
    if !text.lines().any(|l| l.starts_with("142")) {
        let rounds = text
            .lines()
            .find_map(|l| l.strip_prefix("XXR"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| *n > 0);
        if let Some(rounds) = rounds {
            header.push(format!("142 {rounds}"));
        }
    }
    if !text.lines().any(|l| l.starts_with("222")) {
        if let Some(code) = control.and_then(encode_control) {
            header.push(format!("222 {code}"));
        }
    }
    let declared = declared_byes(text);
    let mut trailer = Vec::new();
    for kind in ['F', 'H', 'Z'] {
        let players: Vec<String> = byes
            .iter()
            .filter(|bye| bye.code == kind)
            .filter_map(|bye| bye.player.number)
            .filter(|number| !declared.contains(&(kind, round, *number)))
            .map(|number| format!("{number:>4}"))
            .collect();
        if !players.is_empty() {
            trailer.push(format!("240 {kind} {round:03} {}", players.join(" ")));
        }
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut placed = header.is_empty();
    for line in text.split_inclusive('\n') {
        if !placed && line.starts_with("001") {
            for record in &header {
                out.push_str(record);
                out.push_str(end);
            }
            placed = true;
        }
        out.push_str(line);
    }
    if !placed {
        for record in &header {
            out.push_str(record);
            out.push_str(end);
        }
    }
    if !trailer.is_empty() && !out.is_empty() && !out.ends_with('\n') {
        out.push_str(end);
    }
    for record in trailer {
        out.push_str(&record);
        out.push_str(end);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use crate::pairings::Player;

    fn bye(number: u32, code: char) -> Bye {
        Bye {
            player: Player {
                name: format!("P{number}"),
                number: Some(number),
                ..Player::default()
            },
            code,
        }
    }

    #[test]
    fn controls_encode_as_trf26_periods_or_not_at_all() {
        assert_eq!(encode_control("5400+30").as_deref(), Some("5400+30"));
        assert_eq!(
            encode_control("40/6000+30:900+30").as_deref(),
            Some("40/6000+30:900+30")
        );
        assert_eq!(encode_control("600").as_deref(), Some("600"));
        assert_eq!(
            encode_control("40/7200:3600").as_deref(),
            Some("40/7200:3600")
        );
        // A delay, an hourglass, byo-yomi: no TRF26 code.
        assert_eq!(encode_control("G/25;d5"), None);
        assert_eq!(encode_control("byoyomi:600:5x30"), None);
        assert_eq!(encode_control("not a control"), None);
    }

    #[test]
    fn trf26_adds_rounds_control_and_byes_once() {
        let text = "012 Open\nXXR 5\n001    1 x\n001    2 y\n";
        let out = trf26(
            text,
            2,
            &[bye(2, 'H'), bye(7, 'U'), bye(12, 'H'), bye(3, 'Z')],
            Some("5400+30"),
        );
        assert_eq!(
            out,
            "012 Open\nXXR 5\n142 5\n222 5400+30\n001    1 x\n001    2 y\n\
             240 H 002    2   12\n240 Z 002    3\n"
        );
        // Records of the file win; a bye already declared is not again.
        let text = "012 Open\r\n142 9\r\n222 40/7200:1800+30\r\n240 H 002    2\r\n001    1 x";
        let out = trf26(text, 2, &[bye(2, 'H'), bye(5, 'F')], Some("600"));
        assert_eq!(
            out,
            "012 Open\r\n142 9\r\n222 40/7200:1800+30\r\n240 H 002    2\r\n001    1 x\r\n\
             240 F 002    5\r\n"
        );
        assert_eq!(trf26("", 1, &[], None), "");
    }

    #[test]
    fn trf16_leaves_out_the_trf26_records() {
        let text = "012 Open\n### a comment\n142 9\n192 FIDE_DUTCH\n222 600\nXXR 9\n\
                    001    1 x\n240 H 002    2\n";
        assert_eq!(trf16(text), "012 Open\nXXR 9\n001    1 x\n");
    }
}
