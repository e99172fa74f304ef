//! Offline decoding of recorded DGT traffic: the moves a capture holds.
//!
//! A capture is either one base64-encoded serial read per line (as a
//! capture tool records them) or the raw bytes. Captures carry no
//! timestamps, so the decoder keeps a virtual time driven by the attached
//! clock: every second the clock counts down advances it by a second. Each
//! read is fed separately, so messages split across reads are exercised as
//! on the wire. The moves reported are the game as it stands at the end
//! (takebacks applied, a last tentative move included).

use std::path::PathBuf;

use base64::Engine as _;

use super::detect::{DetectorConfig, MoveDetector};
use super::session::{DgtSession, SessionConfig, SessionOutput};
use crate::engine::{Micros, Side, SECOND};

/// How a capture is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureFormat {
    /// One base64-encoded read per line (blank lines ignored).
    Base64Lines,
    /// The bytes as read from the board.
    Raw,
}

/// One move of a decoded game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedMove {
    pub ply: u32,
    pub side: Side,
    pub uci: String,
    pub san: String,
    pub fen_after: String,
}

#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("line {line}: not base64 ({message})")]
    Base64 { line: usize, message: String },
    #[error("the capture never shows the starting position, so no move can be followed")]
    NoStartPosition,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing the moves: {0}")]
    Output(std::io::Error),
}

/// The serial reads of a capture.
pub fn capture_reads(input: &[u8], format: CaptureFormat) -> Result<Vec<Vec<u8>>, DecodeError> {
    match format {
        CaptureFormat::Raw => Ok(vec![input.to_vec()]),
        CaptureFormat::Base64Lines => {
            let mut reads = Vec::new();
            for (i, line) in input.split(|&b| b == b'\n').enumerate() {
                let line = line.trim_ascii();
                if line.is_empty() {
                    continue;
                }
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(line)
                    .map_err(|e| DecodeError::Base64 {
                        line: i + 1,
                        message: e.to_string(),
                    })?;
                reads.push(bytes);
            }
            Ok(reads)
        }
    }
}

/// The moves recorded in a capture.
pub fn decode_capture(
    input: &[u8],
    format: CaptureFormat,
) -> Result<Vec<DecodedMove>, DecodeError> {
    let reads = capture_reads(input, format)?;
    let mut session = DgtSession::new(SessionConfig::default());
    let mut detector = MoveDetector::new(DetectorConfig::default());
    let mut now: Micros = 0;
    let mut last_faces: Option<(u32, u32)> = None;
    for read in &reads {
        // Every read takes a little time; the clock supplies the seconds.
        now += 1_000;
        for output in session.on_bytes(now, read) {
            match output {
                SessionOutput::Clock(reading) => {
                    let faces = (reading.left.total_seconds(), reading.right.total_seconds());
                    if let Some((left, right)) = last_faces {
                        let elapsed = left.saturating_sub(faces.0) + right.saturating_sub(faces.1);
                        now += Micros::from(elapsed.min(2)) * SECOND;
                    }
                    last_faces = Some(faces);
                    detector.tick(now);
                }
                SessionOutput::ClockPress { .. } => {
                    // A capture does not say which lever is whose.
                    detector.lever_changed_side_unknown(now);
                }
                SessionOutput::Placement(placement) => {
                    detector.tick(now);
                    detector.placement(now, &placement);
                }
                _ => {}
            }
        }
        detector.tick(now);
    }
    if !detector.started() {
        return Err(DecodeError::NoStartPosition);
    }
    Ok(detector
        .moves()
        .into_iter()
        .map(|m| DecodedMove {
            ply: m.ply,
            side: m.side,
            uci: m.uci,
            san: m.san,
            fen_after: m.fen_after,
        })
        .collect())
}

/// The moves one per line, UCI or SAN.
pub fn render_moves(moves: &[DecodedMove], san: bool) -> String {
    let mut out = String::new();
    for m in moves {
        out.push_str(if san { &m.san } else { &m.uci });
        out.push('\n');
    }
    out
}
