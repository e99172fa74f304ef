//! Criterion benchmarks of the timing engine and the notation parser:
//! ns per press, per `next_deadline` / `state` query, per notation parse,
//! and per replay line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails by panicking

use std::hint::black_box;

use chessclockd::engine::{Engine, Input, MatchControl, Settings, Side, MS};
use chessclockd::timecontrol::parse;
use criterion::{criterion_group, criterion_main, Criterion};

fn classical() -> Engine {
    let control = parse("40/5400+30:1800+30").unwrap();
    let mut engine = Engine::new(MatchControl::same(control), Settings::default());
    engine.apply(0, Input::Start).unwrap();
    engine
}

fn bench_engine(c: &mut Criterion) {
    c.bench_function("press (classical, alternating sides)", |b| {
        let mut engine = classical();
        let mut now = 0;
        let mut side = Side::White;
        b.iter(|| {
            now += MS;
            // history grows with every press, as in a real game; reset now
            // and then so the measurement is not dominated by reallocation
            if engine.history().len() > 4_000 {
                engine = classical();
                now = MS;
                side = Side::White;
            }
            black_box(engine.apply(now, Input::Press(side)).unwrap());
            side = side.other();
        })
    });

    c.bench_function("next_deadline", |b| {
        let engine = classical();
        b.iter(|| black_box(engine.next_deadline()))
    });

    c.bench_function("state (pure query)", |b| {
        let engine = classical();
        b.iter(|| black_box(engine.state(black_box(1_234_567))))
    });

    c.bench_function("advance with nothing due", |b| {
        let mut engine = classical();
        let mut now = 0;
        b.iter(|| {
            now += 1;
            black_box(engine.advance(now))
        })
    });
}

fn bench_notation(c: &mut Criterion) {
    c.bench_function("parse 40/5400+30:1800+30", |b| {
        b.iter(|| black_box(parse(black_box("40/5400+30:1800+30")).unwrap()))
    });
    c.bench_function("parse US 40/120, SD/30;d5", |b| {
        b.iter(|| black_box(parse(black_box("40/120, SD/30;d5")).unwrap()))
    });
    let control = parse("40/5400+30:1800+30").unwrap();
    c.bench_function("print + prose", |b| {
        b.iter(|| black_box((control.to_string(), control.prose())))
    });
}

fn bench_replay(c: &mut Criterion) {
    let mut input =
        String::from("{\"control\": \"40/5400+30:1800+30\"}\n{\"t\":0,\"do\":\"start\"}\n");
    let mut t = 0;
    for i in 0..100 {
        t += 1_000;
        let side = if i % 2 == 0 { "white" } else { "black" };
        input.push_str(&format!(
            "{{\"t\":{t},\"do\":\"press\",\"side\":\"{side}\"}}\n"
        ));
    }
    c.bench_function("replay 102 lines", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(32_000);
            let mut err = Vec::new();
            let status = chessclockd::replay::run(&mut input.as_bytes(), &mut out, &mut err);
            black_box((status, out.len()))
        })
    });
}

criterion_group!(benches, bench_engine, bench_notation, bench_replay);
criterion_main!(benches);
