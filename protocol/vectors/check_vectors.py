#!/usr/bin/env python3
"""Checks vectors.json against a second, independent implementation of
SPEC.md written from the document alone (Python standard library only:
zlib.crc32 is CRC-32/ISO-HDLC). Usage: python3 check_vectors.py [vectors.json]

Every valid vector's fields are encoded per SPEC.md section 5 and compared
with its 'raw' and 'wire' bytes, every wire is decoded back to the fields,
every invalid vector must be refused with its error, and every stream must
yield its frames and errors. Exit status 0 when all agree.
"""
import json
import os
import struct
import sys
import zlib

MAX_FRAME = 128
MAX_COBS = 129


def cobs_encode(data):
    out, block = bytearray(), bytearray()
    for b in data:
        if b == 0:
            out += bytes([len(block) + 1]) + block
            block = bytearray()
        else:
            block.append(b)
            if len(block) == 254:
                out += b"\xff" + block
                block = bytearray()
    out += bytes([len(block) + 1]) + block
    return bytes(out)


def cobs_decode(data):
    out, i = bytearray(), 0
    while i < len(data):
        code = data[i]
        end = i + code
        if code == 0 or end > len(data):  # a code byte pointing past the end
            raise ValueError("Cobs")
        out += data[i + 1:end]
        i = end
        if code != 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


class Malformed(Exception):
    pass


class R:
    def __init__(self, b):
        self.b, self.i = b, 0

    def take(self, n):
        if self.i + n > len(self.b):
            raise Malformed()
        v = self.b[self.i:self.i + n]
        self.i += n
        return v

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def str(self, maxlen):
        n = self.u8()
        if n > maxlen:
            raise Malformed()
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed()

    def boolean(self):
        v = self.u8()
        if v > 1:
            raise Malformed()
        return v == 1


def s(text):
    b = text.encode()
    return bytes([len(b)]) + b


def panel_enc(p):
    return s(p["time"]) + struct.pack("<HHB", p["icons"], p["moves"], p["stage"])


def panel_dec(r):
    return {"time": r.str(10), "icons": r.u16(), "moves": r.u16(), "stage": r.u8()}


IDS = {"HELLO": 0x01, "BUTTON": 0x02, "DEVICE_HEARTBEAT": 0x03, "NAK": 0x40, "WELCOME": 0x81,
       "ACK": 0x82, "DISPLAY": 0x83, "LEDS": 0x84, "BEEP": 0x85, "HOST_HEARTBEAT": 0x86}
NAMES = {v: k for k, v in IDS.items()}


def payload(kind, f):
    if kind == "HELLO":
        flags = (1 if f["tenths"] else 0) | (2 if f["buzzer"] else 0) | (4 if f["arbiter_button"] else 0)
        return (struct.pack("<BBBBBBBHIH", f["protocol_version"], f["roles"], f["displays"], f["digits"],
                            flags, f["brightness_levels"], f["text_chars"], f["icons"], f["boot_id"],
                            f["first_unacked_event"])
                + s(f["vendor"]) + s(f["model"]) + s(f["serial"]) + s(f["firmware"]))
    if kind == "BUTTON":
        return struct.pack("<HBBQ", f["event"], f["button"], 1 if f["pressed"] else 0, f["device_time_us"])
    if kind == "DEVICE_HEARTBEAT":
        return struct.pack("<QB", f["device_time_us"], 1 if f["low_power"] else 0)
    if kind == "WELCOME":
        return struct.pack("<BHH", f["protocol_version"], f["heartbeat_interval_ms"], f["link_timeout_ms"])
    if kind == "ACK":
        return struct.pack("<H", f["event"])
    if kind == "DISPLAY":
        return panel_enc(f["left"]) + panel_enc(f["right"]) + s(f["text"]) + bytes([f["brightness"]])
    if kind == "LEDS":
        return bytes([(1 if f["left"] else 0) | (2 if f["right"] else 0) | (4 if f["arbiter"] else 0)])
    if kind == "BEEP":
        return struct.pack("<HB", f["duration_ms"], f["count"])
    if kind == "NAK":
        return bytes([f["code"], f["seq"]])
    return b""  # HOST_HEARTBEAT, UNKNOWN


def parse(kind, r):
    if kind == "HELLO":
        f = dict(zip(["protocol_version", "roles", "displays", "digits", "flags", "brightness_levels",
                      "text_chars"], r.take(7)))
        flags = f.pop("flags")
        f.update(tenths=bool(flags & 1), buzzer=bool(flags & 2), arbiter_button=bool(flags & 4),
                 icons=r.u16(), boot_id=r.u32(), first_unacked_event=r.u16())
        f.update(vendor=r.str(16), model=r.str(16), serial=r.str(16), firmware=r.str(16))
        return f
    if kind == "BUTTON":
        return {"event": r.u16(), "button": r.u8(), "pressed": r.boolean(), "device_time_us": r.u64()}
    if kind == "DEVICE_HEARTBEAT":
        return {"device_time_us": r.u64(), "low_power": bool(r.u8() & 1)}
    if kind == "WELCOME":
        return {"protocol_version": r.u8(), "heartbeat_interval_ms": r.u16(), "link_timeout_ms": r.u16()}
    if kind == "ACK":
        return {"event": r.u16()}
    if kind == "DISPLAY":
        return {"left": panel_dec(r), "right": panel_dec(r), "text": r.str(16), "brightness": r.u8()}
    if kind == "LEDS":
        b = r.u8()
        return {"left": bool(b & 1), "right": bool(b & 2), "arbiter": bool(b & 4)}
    if kind == "BEEP":
        return {"duration_ms": r.u16(), "count": r.u8()}
    if kind == "NAK":
        return {"code": r.u8(), "seq": r.u8()}
    return {}


def decode(wire):
    """wire without delimiter -> (kind, seq, fields) or raises ValueError(error name)."""
    if len(wire) > MAX_COBS:
        raise ValueError("Oversize")
    if not wire or 0 in wire:
        raise ValueError("Cobs")
    raw = cobs_decode(wire)
    if len(raw) < 6:
        raise ValueError("Malformed")
    body, crc = raw[:-4], raw[-4:]
    if struct.pack("<I", zlib.crc32(body)) != crc:
        raise ValueError("BadCrc")
    kind = NAMES.get(body[0], "UNKNOWN")
    if kind == "UNKNOWN":
        return kind, body[1], {"id": body[0]}
    r = R(body[2:])
    try:
        fields = parse(kind, r)
        if r.i != len(r.b):
            raise Malformed()
    except Malformed:
        raise ValueError("Malformed")
    return kind, body[1], fields


def unhex(h):
    return bytes(int(x, 16) for x in h.split())


def stream(data):
    found, buf, over = [], bytearray(), False
    for b in data:
        if b:
            if len(buf) < MAX_COBS and not over:
                buf.append(b)
            else:
                over, buf = True, bytearray()
            continue
        if over:
            found.append(("error", "Oversize"))
            over = False
        elif buf:
            try:
                found.append(("frame", decode(bytes(buf))))
            except ValueError as e:
                found.append(("error", str(e)))
        buf = bytearray()
    return found


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "vectors.json")
    doc = json.load(open(path))
    failures = 0

    def check(ok, what):
        nonlocal failures
        if not ok:
            failures += 1
            print("FAIL", what)

    check(zlib.crc32(b"123456789") == int(doc["crc"]["check_123456789"], 16), "CRC check value")
    frames = {}
    for v in doc["valid"]:
        kind, fields, wire = v["message"], v["fields"], unhex(v["wire"])
        frames[v["name"]] = (kind, v["seq"], fields)
        check(decode(wire[:-1]) == (kind, v["seq"], fields), f"{v['name']}: decode")
        if not v.get("decode_only"):
            ident = IDS.get(kind, fields.get("id"))
            body = bytes([ident, v["seq"]]) + payload(kind, fields)
            raw = body + struct.pack("<I", zlib.crc32(body))
            check(raw == unhex(v["raw"]), f"{v['name']}: raw")
            check(cobs_encode(raw) + b"\0" == wire, f"{v['name']}: wire")
    for v in doc["invalid"]:
        try:
            decode(unhex(v["wire"])[:-1])
            check(False, f"{v['name']}: accepted")
        except ValueError as e:
            check(str(e) == v["error"], f"{v['name']}: {e} != {v['error']}")
    for st in doc["streams"]:
        want = [("frame", frames[e["frame"]]) if "frame" in e else ("error", e["error"]) for e in st["expect"]]
        check(stream(unhex(st["bytes"])) == want, f"stream {st['name']}")
    total = len(doc["valid"]) + len(doc["invalid"]) + len(doc["streams"])
    print(f"{total} vectors, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
