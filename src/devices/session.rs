//! One serial device's protocol session: a pure state machine (bytes and
//! instants in; frames to send, events and the next deadline out).
