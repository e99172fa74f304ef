//! Properties of `replay::run` over random inputs: it never panics; it either
//! prints exactly one line per event line and exits 0, or prints nothing on
//! standard output and exactly one `line N: ...` on standard error with
//! status 2.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use chessclockd::replay;
use proptest::prelude::*;

const SETUPS: &[&str] = &[
    r#"{"control": "180+2"}"#,
    r#"{"control": "40/5400+30:1800+30", "stage_advance": "flag"}"#,
    r#"{"control": {"white": "300", "black": "240"}, "freeze": true}"#,
    r#"{"control": "G/5;d3", "credit": "after-move"}"#,
    r#"{"control": {"type": "byo-yomi", "main": 5, "periods": 2, "period": 3}}"#,
    r#"{"control": "*30"}"#,
    r#"{"control": "-"}"#,
    r#"{"control": "5x"}"#,
    r#"{"contrl": "300"}"#,
];

fn event_line() -> impl Strategy<Value = (i64, String)> {
    let kinds = prop_oneof![
        Just(r#""do":"start""#.to_owned()),
        Just(r#""do":"press","side":"white""#.to_owned()),
        Just(r#""do":"press","side":"black""#.to_owned()),
        Just(r#""do":"pause""#.to_owned()),
        Just(r#""do":"resume""#.to_owned()),
        Just(r#""do":"state""#.to_owned()),
        (0i64..20_000, 0u32..50).prop_map(|(r, m)| format!(
            r#""do":"adjust","side":"black","remaining_ms":{r},"moves":{m}"#
        )),
        Just(r#""do":"press""#.to_owned()),
        Just(r#""do":"jump""#.to_owned()),
        Just(r#""do":"press","side":"red""#.to_owned()),
    ];
    (0i64..30_000, kinds)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn all_or_nothing(
        setup in prop::sample::select(SETUPS),
        events in prop::collection::vec(event_line(), 0..30),
        backwards in any::<bool>(),
        garbage in prop::option::of("\\PC{0,12}"),
    ) {
        let mut input = format!("{setup}\n");
        let mut t = 0i64;
        for (gap, body) in &events {
            t += gap;
            let shown = if backwards && *gap > 25_000 { t - 2 * gap } else { t };
            input.push_str(&format!("{{\"t\":{shown},{body}}}\n"));
        }
        if let Some(garbage) = garbage {
            input.push_str(&garbage);
            input.push('\n');
        }
        let mut out = Vec::new();
        let mut err = Vec::new();
        let status = replay::run(&mut input.as_bytes(), &mut out, &mut err);
        let out = String::from_utf8(out).unwrap();
        let err = String::from_utf8(err).unwrap();
        if status == 0 {
            prop_assert!(err.is_empty());
            let event_lines = input.lines().skip(1).filter(|l| !l.trim().is_empty()).count();
            prop_assert_eq!(out.lines().count(), event_lines);
        } else {
            prop_assert_eq!(status, 2);
            prop_assert!(out.is_empty(), "partial output: {}", out);
            prop_assert!(err.starts_with("line "), "{}", err);
            prop_assert_eq!(err.lines().count(), 1, "{}", err);
        }
    }
}
