#!/usr/bin/env python3
"""Checks vectors.json against a second, independent implementation of
SPEC.md written from the document alone (Python standard library only:
zlib.crc32 is CRC-32/ISO-HDLC). Usage: python3 check_vectors.py [vectors.json]

Every valid vector's fields are encoded per SPEC.md section 5 and compared
with its 'raw' and 'wire' bytes, every wire is decoded back to the fields,
every invalid vector must be refused with its error, and every stream must
yield its frames and errors. The rules above the framing (SPEC 1.1) are
implemented here from the document too, and each table is checked: the host's
answer to a HELLO (6.1), the time text (8.1), brightness (5.7), icons (8.2),
the device's retransmissions (7.3) and the host's time mapping (9.2). Exit
status 0 when all agree.
"""
import json
import os
import string
import struct
import sys
import zlib
from fractions import Fraction

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


def header(wire):
    """(id, seq) of a delimited-free wire frame whose CRC is valid, else None."""
    try:
        raw = cobs_decode(wire)
    except ValueError:
        return None
    if len(raw) < 6 or struct.pack("<I", zlib.crc32(raw[:-4])) != raw[-4:]:
        return None
    return raw[0], raw[1]


# --- SPEC 5.2, 6.1, 10.2: what a host answers to a HELLO ---------------------

SERIAL_CHARS = set(string.ascii_uppercase + string.ascii_lowercase + string.digits)


def host_answer(wire, slot_roles, linked_elsewhere):
    try:
        kind, seq, f = decode(wire)
    except ValueError as e:
        h = header(wire)
        if str(e) == "Malformed" and h is not None and h[0] == IDS["HELLO"]:
            return {"message": "NAK", "code": 4, "seq": h[1]}
        return None
    if kind != "HELLO":
        return None
    if f["protocol_version"] != 1:
        return {"message": "NAK", "code": 5, "seq": seq}
    serial = f["serial"]
    if not (1 <= len(serial) <= 16 and set(serial) <= SERIAL_CHARS):
        return {"message": "NAK", "code": 4, "seq": seq}
    if f["roles"] & 0x03 & slot_roles != slot_roles:
        return {"message": "NAK", "code": 6, "seq": seq}
    if linked_elsewhere:
        return {"message": "NAK", "code": 6, "seq": seq}
    return {"message": "WELCOME"}


# --- SPEC 8.1: the time text ---------------------------------------------------

def ceil_div(a, b):
    return -(-a // b)


def time_text(c):
    digits = max(c["digits"], 4)

    def whole(seconds, minutes):
        if seconds < 3600:
            return "%d:%02d" % (seconds // 60, seconds % 60)
        hours = seconds // 3600
        if len(str(hours)) + 4 <= digits:
            return "%d:%02d:%02d" % (hours, seconds // 60 % 60, seconds % 60)
        largest = (10 ** (digits - 2) - 1) * 60 + 59
        minutes = min(minutes, largest)
        return "%d.%02d" % (minutes // 60, minutes % 60)

    if "used_us" in c:
        used = max(c["used_us"], 0)
        return whole(used // 1000000, used // 60000000)
    r = max(c["remaining_us"], 0)
    tenths = ceil_div(r, 100000)
    fits = 600000000 if digits == 4 else 3600000000
    limit = min(c["tenths_below_ms"] * 1000, fits) if c["tenths"] else 0
    if tenths * 100000 < limit:
        return "%d:%02d.%d" % (tenths // 600, tenths // 10 % 60, tenths % 10)
    return whole(ceil_div(r, 1000000), ceil_div(r, 60000000))


def brightness(setting, levels):
    if levels == 0:
        return 0
    exact = Fraction(setting * (levels - 1), 255)
    return int(exact + Fraction(1, 2))  # halves up


# --- SPEC 8.2: icons -------------------------------------------------------------

ICON = {"FLAG": 0x0001, "FIRST_FLAG": 0x0002, "STAGE_FLAG": 0x0004, "RUNNING": 0x0008,
        "PAUSED": 0x0010, "LINK_LOST": 0x0020, "LOW_POWER": 0x0040, "NO_BUTTONS": 0x0200}


def standing_flags(flags):
    """The flags down after `flags` (falls and time given back, in order),
    in the order they first fell: a side's later fall keeps its place, time
    given back takes its flag away (SPEC 8.2)."""
    out = []
    for f in flags:
        if f.get("given_back"):
            out = [g for g in out if g["side"] != f["side"]]
        elif any(g["side"] == f["side"] for g in out):
            out = [f if g["side"] == f["side"] else g for g in out]
        else:
            out.append(f)
    return out


def icons(c):
    down = standing_flags(c["flags"])

    def side_icons(side):
        bits = 0
        own = [f for f in down if f["side"] == side]
        if own and not own[-1]["last_stage"]:
            bits |= ICON["STAGE_FLAG"]
        elif own:
            bits |= ICON["FLAG"]
        if down and down[0]["side"] == side:
            bits |= ICON["FIRST_FLAG"]
        if c["running"] == side:
            bits |= ICON["RUNNING"]
        if c["paused"]:
            bits |= ICON["PAUSED"]
        if not c["buttons_linked"]:
            bits |= ICON["NO_BUTTONS"]
        return bits
    left = "white" if c["white_button"] == "left" else "black"
    right = "black" if left == "white" else "white"
    return side_icons(left), side_icons(right)


# --- SPEC 7.3: when a device sends each BUTTON ------------------------------------

RETRANSMIT_US = 100000


def retransmissions(steps, until):
    queue, next_event, linked, timer, sends, i = [], 0, False, None, [], 0
    while True:
        times = ([steps[i]["at_us"]] if i < len(steps) else []) + ([timer] if timer is not None else [])
        if not times:
            break
        t = min(times)
        if t > until:
            break
        while i < len(steps) and steps[i]["at_us"] == t:
            step = steps[i]
            i += 1
            if step["do"] == "press":
                queue.append(next_event)
                if linked:
                    sends.append((t, next_event))
                    if timer is None:
                        timer = t + RETRANSMIT_US
                next_event += 1
            elif step["do"] == "welcome":
                linked = True
                sends.extend((t, e) for e in queue)
                timer = t + RETRANSMIT_US if queue else None
            elif step["do"] == "ack" and linked and step["event"] in queue:
                queue = queue[queue.index(step["event"]) + 1:]
                timer = t + RETRANSMIT_US if queue else None
        if timer is not None and timer <= t:
            sends.extend((t, e) for e in queue)
            timer = t + RETRANSMIT_US if queue else None
    return sends


# --- SPEC 9.2: the host's time mapping (no rate estimated yet) ---------------------

DELTA_US = 1000
UNESTIMATED_PPB = 600000
WINDOW = 4


def time_mapping(observations):
    buckets = {}  # bucket -> [offset, device, heartbeat offset or None, its device]
    results = []

    def record(d, o, heartbeat):
        b = d // 1000000
        if not buckets or b > max(buckets):
            buckets[b] = [o, d, o if heartbeat else None, d]
            return
        if b not in buckets:
            return  # older than what is kept
        slot = buckets[b]
        if o < slot[0]:
            slot[0], slot[1] = o, d
        if heartbeat and (slot[2] is None or o < slot[2]):
            slot[2], slot[3] = o, d

    def lowest(heartbeats_only):
        if not buckets:
            return None
        newest = max(buckets)
        best = None
        for b in sorted(buckets, reverse=True):
            if newest - b >= WINDOW:
                break
            o, d = (buckets[b][2], buckets[b][3]) if heartbeats_only else (buckets[b][0], buckets[b][1])
            if o is not None and (best is None or o < best[0]):
                best = (o, d)
        return best

    for ob in observations:
        d, h = ob["device_us"], ob["arrival_us"]
        o = h - d
        if ob["kind"] == "heartbeat":
            record(d, o, True)
            continue
        hb = lowest(True)
        if hb is None:
            use = "unchecked"
        elif hb[0] - o > DELTA_US + abs(d - hb[1]) * UNESTIMATED_PPB // 1000000000:
            use = "rejected"
        else:
            record(d, o, False)
            use = "used"
        best = lowest(False)
        results.append({"use": use, "mapped_us": h if best is None else min(d + best[0], h)})
    return results


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
    wires = {v["name"]: unhex(v["wire"]) for v in doc["valid"] + doc["invalid"]}
    for h in doc["handshakes"]:
        wire = wires[h.get("hello") or h["wire"]]
        got = host_answer(wire[:-1], h["slot_roles"], h["linked_elsewhere"])
        check(got == h["answer"], f"handshake {h['name']}: {got} != {h['answer']}")
    for c in doc["time_text"]:
        got = time_text(c)
        check(got == c["text"], f"time_text {c}: {got!r}")
    for c in doc["brightness"]:
        got = brightness(c["setting"], c["levels"])
        check(got == c["value"], f"brightness {c}: {got}")
    for c in doc["icons"]:
        got = icons(c)
        check(got == (c["left"], c["right"]), f"icons {c['name']}: {got}")
    for r in doc["retransmission"]:
        got = retransmissions(r["steps"], r["until_us"])
        want = [(x["at_us"], x["event"]) for x in r["sends"]]
        check(got == want, f"retransmission {r['name']}: {got} != {want}")
    for m in doc["time_mapping"]:
        got = time_mapping(m["observations"])
        want = [o["expect"] for o in m["observations"] if o["kind"] == "button"]
        check(got == want, f"time_mapping {m['name']}: {got} != {want}")
    # The icon bits the host never sends (SPEC 8.2) are in no host vector.
    for v in doc["valid"]:
        if v["message"] == "DISPLAY":
            for panel in ("left", "right"):
                check(v["fields"][panel]["icons"] & (ICON["LINK_LOST"] | ICON["LOW_POWER"]) == 0,
                      f"{v['name']}: a host DISPLAY with LINK_LOST or LOW_POWER")
    total = (len(doc["valid"]) + len(doc["invalid"]) + len(doc["streams"]) + len(doc["handshakes"])
             + len(doc["time_text"]) + len(doc["brightness"]) + len(doc["icons"])
             + len(doc["retransmission"]) + len(doc["time_mapping"]))
    print(f"{total} vectors, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
