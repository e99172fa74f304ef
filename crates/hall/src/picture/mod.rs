//! Pictures drawn by code for the hall's pages: the mini board of a board
//! card ([`board_svg`]) and the position it shows ([`position`]: an
//! e-board's FEN and the last move, found by replaying the game's PGN
//! with the rules the daemon's e-board uses, `shakmaty`).
//!
//! Promises: each picture is a pure function of its input (the same input,
//! byte for byte the same SVG: each has a golden file test); a picture
//! draws only what it parsed, never its input's text, so nothing given can
//! put markup or script into it; bad input is an error, never a panic.

pub mod board_svg;
pub mod position;
