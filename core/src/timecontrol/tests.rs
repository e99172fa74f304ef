use super::*;
use crate::time::SECOND;

fn stage(moves: Option<u32>, secs: i64, bonus: Bonus) -> Stage {
    Stage {
        moves,
        time: secs * SECOND,
        bonus,
    }
}

fn s(secs: i64) -> i64 {
    secs * SECOND
}

#[test]
fn pgn_fide_classical_with_increment_inside_moves_field() {
    let control = parse("40/5400+30:1800+30").unwrap();
    assert_eq!(
        control,
        TimeControl::Stages(vec![
            stage(Some(40), 5400, Bonus::Increment(s(30))),
            stage(None, 1800, Bonus::Increment(s(30))),
        ])
    );
    assert_eq!(control.to_string(), "40/5400+30:1800+30");
    assert_eq!(
        control.prose(),
        "90 min for 40 moves, then 30 min; 30 s per move from move 1"
    );
}

#[test]
fn pgn_simple_forms() {
    assert_eq!(
        parse("300").unwrap(),
        TimeControl::sudden_death(s(300), Bonus::None)
    );
    assert_eq!(
        parse("180+2").unwrap(),
        TimeControl::sudden_death(s(180), Bonus::Increment(s(2)))
    );
    assert_eq!(
        parse("300d3").unwrap(),
        TimeControl::sudden_death(s(300), Bonus::Delay(s(3)))
    );
    assert_eq!(
        parse("300b3").unwrap(),
        TimeControl::sudden_death(s(300), Bonus::Bronstein(s(3)))
    );
    assert_eq!(parse("-").unwrap(), TimeControl::Upcount);
    assert_eq!(
        parse("*180").unwrap(),
        TimeControl::Hourglass { time: s(180) }
    );
    assert_eq!(
        parse("40/7200").unwrap(),
        TimeControl::Stages(vec![stage(Some(40), 7200, Bonus::None)])
    );
}

#[test]
fn pgn_unknown_is_not_playable() {
    let err = parse("?").unwrap_err();
    assert_eq!(err.position, 1);
    assert!(err.message.contains("unknown"), "{err}");
}

#[test]
fn errors_name_the_position() {
    assert_eq!(parse("40/5400+x").unwrap_err().position, 9);
    assert_eq!(parse("40/5400:18a").unwrap_err().position, 11);
    assert_eq!(parse("").unwrap_err().position, 1);
    assert_eq!(parse("300:60").unwrap_err().position, 1);
    assert_eq!(parse("0/300").unwrap_err().position, 1);
    assert_eq!(parse("*180:60").unwrap_err().position, 5);
    assert_eq!(parse("99999999999999999999").unwrap_err().position, 1);
    assert_eq!(parse("300+").unwrap_err().position, 5);
    assert_eq!(parse("G/90;x5").unwrap_err().position, 6);
    assert_eq!(parse("é").unwrap_err().position, 1);
}

/// Controls that give no time are refused at the notation, with the position
/// of the time at fault; a later stage of 0 s with a bonus is a real control.
#[test]
fn zero_time_controls_are_refused() {
    for (text, position) in [
        ("0", 1),
        ("0+0", 1),
        ("0d0", 1),
        ("0+2", 1),
        ("40/0", 4),
        ("40/0+30:1800", 4),
        ("40/5400:0", 9),
        ("40/5400:0+0", 9),
        ("*0", 2),
        ("G/0", 3),
        ("G/0;inc5", 3),
        ("40/0, SD/30", 4),
        ("40/120, SD/0;d5", 12),
    ] {
        let err = parse(text).unwrap_err();
        assert_eq!(err.position, position, "{text}: {err}");
        assert!(
            err.message.contains("0 s") || err.message.contains("no time"),
            "{text}: {err}"
        );
    }
    assert!(parse("60/300:0+2").is_ok());
    assert!(parse("40/5400+30:0+30").is_ok());
    assert!(
        parse("byoyomi:0:5x30").is_ok(),
        "byo-yomi periods give time"
    );
    assert!(
        parse("canadian:0:25/300").is_ok(),
        "Canadian blocks give time"
    );
}

#[test]
fn us_chess_notation() {
    assert_eq!(
        parse("G/90;d5").unwrap(),
        TimeControl::sudden_death(s(5400), Bonus::Delay(s(5)))
    );
    assert_eq!(
        parse("40/120, SD/30;d5").unwrap(),
        TimeControl::Stages(vec![
            stage(Some(40), 7200, Bonus::Delay(s(5))),
            stage(None, 1800, Bonus::Delay(s(5))),
        ])
    );
    assert_eq!(
        parse("G/3;inc2").unwrap(),
        TimeControl::sudden_death(s(180), Bonus::Increment(s(2)))
    );
    assert_eq!(
        parse("G/5+3").unwrap(),
        TimeControl::sudden_death(s(300), Bonus::Increment(s(3)))
    );
    assert_eq!(
        parse("g/60; d 5").unwrap(),
        TimeControl::sudden_death(s(3600), Bonus::Delay(s(5)))
    );
    assert_eq!(
        parse("G/90;d5").unwrap().to_string(),
        "5400d5",
        "US notation prints as project notation"
    );
}

#[test]
fn byo_yomi_and_canadian_text_forms_round_trip() {
    let byo = parse("byoyomi:600:5x30").unwrap();
    assert_eq!(
        byo,
        TimeControl::ByoYomi {
            main: s(600),
            periods: 5,
            period: s(30)
        }
    );
    assert_eq!(parse(&byo.to_string()).unwrap(), byo);
    assert_eq!(byo.prose(), "10 min, then byo-yomi: 5 periods of 30 s");
    let canadian = parse("canadian:600:25/300").unwrap();
    assert_eq!(
        canadian,
        TimeControl::Canadian {
            main: s(600),
            moves: 25,
            block: s(300)
        }
    );
    assert_eq!(parse(&canadian.to_string()).unwrap(), canadian);
    assert_eq!(parse("byoyomi:600:0x30").unwrap_err().position, 13);
    assert_eq!(parse("canadian:600:25/0").unwrap_err().position, 17);
}

#[test]
fn prose_for_other_shapes() {
    assert_eq!(
        parse("180+2").unwrap().prose(),
        "3 min; 2 s per move from move 1"
    );
    assert_eq!(
        parse("40/7200").unwrap().prose(),
        "120 min for every 40 moves"
    );
    assert_eq!(
        parse("40/6000:20/3000:900+30").unwrap().prose(),
        "100 min for 40 moves, then 50 min for 20 moves, then 15 min; 30 s per move from move 61"
    );
    assert_eq!(
        parse("40/7200:1800d5").unwrap().prose(),
        "120 min for 40 moves, then 30 min; 5 s delay per move from move 41"
    );
    assert_eq!(
        parse("40/5400+30:1800").unwrap().prose(),
        "90 min for 40 moves with 30 s per move, then 30 min"
    );
    assert_eq!(parse("90").unwrap().prose(), "1 min 30 s");
    assert_eq!(
        parse("-").unwrap().prose(),
        "no time limit (the clocks count up)"
    );
}

#[test]
fn stage_bookkeeping() {
    let classical = parse("40/5400+30:1800+30").unwrap();
    assert_eq!(classical.moves_by_end_of(1), Some(40));
    assert_eq!(classical.moves_by_end_of(2), None);
    assert!(!classical.is_last_stage(1));
    assert!(classical.is_last_stage(2));
    let repeating = parse("40/7200:20/3600").unwrap();
    assert_eq!(repeating.moves_by_end_of(1), Some(40));
    assert_eq!(repeating.moves_by_end_of(2), Some(60));
    assert_eq!(repeating.moves_by_end_of(3), Some(80));
    assert!(!repeating.is_last_stage(7));
    assert!(!repeating.is_last_stage(MAX_STAGE - 1));
    assert!(repeating.is_last_stage(MAX_STAGE));
    assert_eq!(repeating.max_stage(), MAX_STAGE);
    assert_eq!(repeating.stage(9).unwrap().time, s(3600));
}

#[test]
fn display_round_trips() {
    for text in [
        "40/5400+30:1800+30",
        "300",
        "180+2",
        "300d3",
        "300b3",
        "-",
        "*60",
        "40/7200:20/3600:900d10",
    ] {
        let control = parse(text).unwrap();
        assert_eq!(control.to_string(), text);
        assert_eq!(parse(&control.to_string()).unwrap(), control);
    }
}

/// A stage has at most 999 moves (`docs/replay-format.md`,
/// `docs/time-controls.md`): a 1000-move stage is refused in every notation,
/// naming the limit and the position of the count; 999 is a control. The
/// configuration, the CLI, D-Bus and the replay all parse with this one
/// function.
#[test]
fn a_stage_of_1000_moves_is_refused_naming_the_limit() {
    for (text, position) in [
        ("1000/60", 1),
        ("40/5400:1000/60", 9),
        ("40/120, 1000/60, SD/30;d5", 9),
        ("canadian:600:1000/300", 14),
    ] {
        let err = parse(text).unwrap_err();
        assert_eq!(err.position, position, "{text}: {err}");
        assert!(
            err.message
                .ends_with("a stage of 1000 moves is more than a game can have (at most 999)"),
            "{text}: {err}"
        );
    }
    let err = parse("byoyomi:600:1000x30").unwrap_err();
    assert!(err.message.contains("at most 999"), "{err}");
    for text in [
        "999/60",
        "40/5400:999/60",
        "canadian:600:999/300",
        "byoyomi:600:999x30",
    ] {
        parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}
