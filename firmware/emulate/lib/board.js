// The board around an emulated Pico, wired as hardware/README.md says:
// lever switches to ground on GP2 (left), GP3 (right), GP4 (arbiter);
// TM1637 modules on GP10/GP11 (left: CLK, DIO) and GP12/GP13 (right), or a
// MAX7219 chain on GP19 (DIN), GP18 (CLK), GP17 (CS); LEDs and the buzzer
// on the other pins. The display chips are read back from the pin levels
// the firmware drives, decoded as each chip's datasheet describes its
// serial interface, into the text a person at the board would read.

export const PIN = {
  left: 2,
  right: 3,
  arbiter: 4,
  playerLeds: [6, 7, 8],
  tm1637: [
    { clk: 10, dio: 11 },
    { clk: 12, dio: 13 },
  ],
  mute: 14,
  buzzer: 15,
  linkLeds: [25, 16],
  max7219: { din: 19, clk: 18, cs: 17 },
  iconLeds: [20, 21, 22, 26, 27], // flag L, running L, flag R, running R, paused
  lowPower: 28,
};

const BUTTON_PIN = [PIN.left, PIN.right, PIN.arbiter];

// Seven-segment patterns, segment a = bit 0 .. g = bit 6 (the usual
// lettering: a top, then clockwise, g the middle bar).
const GLYPHS = new Map([
  [0x3f, '0'],
  [0x06, '1'],
  [0x5b, '2'],
  [0x4f, '3'],
  [0x66, '4'],
  [0x6d, '5'],
  [0x7d, '6'],
  [0x07, '7'],
  [0x7f, '8'],
  [0x6f, '9'],
  [0x40, '-'],
  [0x00, ' '],
]);

function glyph(segments) {
  return GLYPHS.get(segments & 0x7f) ?? '?';
}

/// A TM1637 (Titan Micro datasheet, "interface interpretation"): start is
/// DIO falling while CLK is high, stop DIO rising while CLK is high; bits
/// are taken on CLK rising, least significant first, and the ninth clock
/// of each byte is the chip's acknowledge. The first byte of a transfer is
/// a command: 0x40 data (bit 2: fixed address), 0xC0|n address, 0x80 display
/// control (bit 3 on, bits 0-2 brightness).
export class Tm1637 {
  constructor() {
    this.clk = true;
    this.dio = true;
    this.active = false;
    this.bit = 0;
    this.byte = 0;
    this.count = 0;
    this.address = 0;
    this.autoIncrement = true;
    this.addressing = false;
    this.ram = [0, 0, 0, 0, 0, 0];
    this.on = false;
    this.brightness = 0;
    this.updates = 0;
    this.stray = 0;
  }

  setClk(high) {
    const rising = high && !this.clk;
    this.clk = high;
    if (!rising || !this.active) return;
    if (this.bit < 8) {
      if (this.dio) this.byte |= 1 << this.bit;
      this.bit++;
    } else {
      const b = this.byte;
      this.bit = 0;
      this.byte = 0;
      this.take(b);
    }
  }

  setDio(high) {
    const was = this.dio;
    this.dio = high;
    if (this.clk && was && !high) {
      this.active = true;
      this.bit = 0;
      this.byte = 0;
      this.count = 0;
      this.addressing = false;
    } else if (this.clk && !was && high) {
      this.active = false;
    }
  }

  take(b) {
    const first = this.count === 0;
    this.count++;
    if (first) {
      switch (b & 0xc0) {
        case 0x40:
          this.autoIncrement = (b & 0x04) === 0;
          return;
        case 0xc0:
          this.address = b & 0x0f;
          this.addressing = true;
          return;
        case 0x80:
          this.on = (b & 0x08) !== 0;
          this.brightness = b & 0x07;
          this.updates++;
          return;
        default:
          this.stray++;
          return;
      }
    }
    if (!this.addressing) {
      this.stray++;
      return;
    }
    if (this.address < this.ram.length) this.ram[this.address] = b;
    if (this.autoIncrement) this.address++;
  }

  /// What the four-digit module shows: the colon is bit 7 of digit 1.
  get text() {
    if (!this.on) return '';
    let s = '';
    for (let i = 0; i < 4; i++) {
      s += glyph(this.ram[i]);
      if (i === 1 && this.ram[1] & 0x80) s += ':';
    }
    return s.trimStart();
  }
}

/// A chain of MAX7219s (Maxim datasheet): 16-bit words, most significant
/// bit first, taken on CLK rising while CS is low and latched on CS rising;
/// with N modules the last N words shifted are the registers of modules
/// N-1 .. 0 (module 0 is the one wired to the controller, whose word comes
/// last). Register 1..8 are digits 0..7 (digit 0 the rightmost on the usual
/// modules), 9 decode mode, 0xA intensity, 0xB scan limit, 0xC shutdown,
/// 0xF display test. In no-decode mode a digit byte is DP A B C D E F G.
export class Max7219Chain {
  constructor(modules) {
    this.clk = false;
    this.cs = true;
    this.din = false;
    this.bits = [];
    this.modules = Array.from({ length: modules }, () => ({
      digits: new Array(8).fill(0),
      decode: 0,
      intensity: 0,
      scanLimit: 0,
      shutdown: 0,
      test: 0,
    }));
    this.badLatches = 0;
    this.latches = 0;
  }

  setDin(high) {
    this.din = high;
  }

  setClk(high) {
    const rising = high && !this.clk;
    this.clk = high;
    if (rising && !this.cs) this.bits.push(this.din ? 1 : 0);
  }

  setCs(high) {
    const rising = high && !this.cs;
    this.cs = high;
    if (!high) {
      this.bits = [];
      return;
    }
    if (!rising) return;
    const n = this.modules.length;
    if (this.bits.length !== 16 * n) {
      this.badLatches++;
      return;
    }
    this.latches++;
    for (let m = 0; m < n; m++) {
      // Module m holds the word that entered (n - 1 - m) words before the end.
      const start = 16 * (n - 1 - m);
      let word = 0;
      for (let k = 0; k < 16; k++) word = (word << 1) | this.bits[start + k];
      this.write(this.modules[m], (word >> 8) & 0x0f, word & 0xff);
    }
  }

  write(mod, reg, value) {
    if (reg >= 1 && reg <= 8) mod.digits[reg - 1] = value;
    else if (reg === 0x09) mod.decode = value;
    else if (reg === 0x0a) mod.intensity = value & 0x0f;
    else if (reg === 0x0b) mod.scanLimit = value & 0x07;
    else if (reg === 0x0c) mod.shutdown = value & 1;
    else if (reg === 0x0f) mod.test = value & 1;
  }

  /// The text of module m, leftmost digit (register 8) first; a lit
  /// decimal point reads as '.'.
  text(m) {
    const mod = this.modules[m];
    if (!mod || !mod.shutdown || mod.decode !== 0) return '';
    let s = '';
    for (let d = 7; d >= 0; d--) {
      if (d > mod.scanLimit) continue;
      const v = mod.digits[d];
      // DP A B C D E F G (bit 7 .. 0) to a..g = bit 0..6.
      let seg = 0;
      for (let k = 0; k < 7; k++) if (v & (0x40 >> k)) seg |= 1 << k;
      s += glyph(seg);
      if (v & 0x80) s += '.';
    }
    return s.trimStart();
  }
}

/// Everything wired to one Pico. `kind`: { buttons, display, chip
/// ('tm1637' | 'max7219'), panels }.
export class Board {
  constructor(pico, kind) {
    this.pico = pico;
    this.kind = kind;
    this.edges = []; // lever edges driven: { button, closed, nanos }
    this.attach();
    pico.onPowerOn.push(() => this.attach());
    pico.pinListeners.push((pin, high, nanos) => this.pin(pin, high, nanos));
  }

  /// The chips lose their registers with the power; the levers stay open.
  attach() {
    const { kind, pico } = this;
    this.tm = kind.display && kind.chip === 'tm1637' ? [new Tm1637(), new Tm1637()] : null;
    this.max = kind.display && kind.chip === 'max7219' ? new Max7219Chain(kind.panels) : null;
    // The TM1637 modules pull CLK and DIO up; the firmware drives them
    // open drain.
    pico.pulledUp = new Set(this.tm ? PIN.tm1637.flatMap((m) => [m.clk, m.dio]) : []);
    for (const p of pico.pulledUp) pico.settle(p);
  }

  pin(pin, high) {
    if (this.tm) {
      PIN.tm1637.forEach((m, i) => {
        if (pin === m.clk) this.tm[i].setClk(high);
        else if (pin === m.dio) this.tm[i].setDio(high);
      });
    }
    if (this.max) {
      if (pin === PIN.max7219.din) this.max.setDin(high);
      else if (pin === PIN.max7219.clk) this.max.setClk(high);
      else if (pin === PIN.max7219.cs) this.max.setCs(high);
    }
  }

  /// The panels' texts, left first (as many as the unit has modules).
  get panels() {
    if (this.tm) return this.tm.slice(0, this.kind.panels).map((c) => c.text);
    if (this.max) return this.max.modules.map((_, i) => this.max.text(i));
    return [];
  }

  get chipUpdates() {
    if (this.tm) return this.tm.reduce((n, c) => n + c.updates, 0);
    if (this.max) return this.max.latches;
    return 0;
  }

  led(pin) {
    return this.pico.level(pin);
  }

  get leds() {
    const l = (p) => this.led(p);
    return {
      player: PIN.playerLeds.map(l),
      icons: PIN.iconLeds.map(l),
      link: PIN.linkLeds.map(l),
      buzzer: l(PIN.buzzer),
      lowPower: l(PIN.lowPower),
    };
  }

  /// Closes (`closed`) or opens lever `button` (0 left, 1 right, 2
  /// arbiter) at emulated instant `nanos`.
  lever(button, closed, nanos) {
    const pin = BUTTON_PIN[button];
    this.pico.at(nanos, () => {
      this.edges.push({ button, closed, nanos: this.pico.nanos });
      this.pico.drive(pin, closed ? false : undefined);
    });
  }

  /// A press as a real lever makes it: the contact closes at `atNanos`,
  /// bounces open and shut for `bounceUs` (edges every `stepUs`), stays
  /// closed for `holdMs`, then opens with a bounce of its own. Returns the
  /// first edge's instant in µs of the device clock.
  press(button, { atNanos = this.pico.nanos + 1000, bounceUs = 1400, stepUs = 350, holdMs = 80 } = {}) {
    let t = atNanos;
    let closed = true;
    this.lever(button, true, t);
    for (let u = stepUs; u < bounceUs; u += stepUs) {
      closed = !closed;
      this.lever(button, closed, atNanos + u * 1000);
    }
    if (!closed) this.lever(button, true, atNanos + bounceUs * 1000);
    t = atNanos + (bounceUs + holdMs * 1000) * 1000;
    this.lever(button, false, t);
    this.lever(button, true, t + 200_000);
    this.lever(button, false, t + 500_000);
    return atNanos / 1000;
  }

  /// A spike: the contact closes for `us` and opens again (no press).
  glitch(button, { atNanos = this.pico.nanos + 1000, us = 1000 } = {}) {
    this.lever(button, true, atNanos);
    this.lever(button, false, atNanos + us * 1000);
  }
}
