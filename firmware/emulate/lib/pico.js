// One emulated Raspberry Pi Pico running a chessclock UF2, on the rp2040js
// emulator. rp2040js models one Cortex-M0+ core and the peripherals; what
// the firmware needs beyond that is supplied here, each piece a workaround
// for a named gap of the emulator (README.md, "What the emulator lacks"):
//
// * no bootrom ships with the package: a harness ROM answers the bootrom's
//   documented table lookup and the few ROM functions the firmware calls
//   (memcpy44, the flash connect/exit/flush/enter calls), and the harness
//   starts core 0 the way boot2 leaves it (VTOR, SP and PC from the vector
//   table after the 256-byte boot2);
// * no second core: core 1 is a second instance of the package's own core
//   class on the same bus, with the SIO CPUID and inter-core FIFOs, the
//   bootrom's core 1 launch handshake, per-core NVIC delivery of the
//   IO_BANK0 and SIO interrupts and the PROC1 GPIO interrupt registers;
// * SEV does nothing in rp2040js: it wakes the other core's (and its own)
//   WFE here, as on the chip (embassy's executors sleep in WFE);
// * the flash chip behind the SSI has no unique-id command (0x4B): the
//   harness answers it with the unit's 64-bit id, as a W25Q16 would;
// * XIP_CTRL and the ring oscillator are unmodelled: reads of XIP_CTRL's
//   stream counter return 0 (no stream running) and the ROSC's random bit
//   comes from a seeded generator, so each power cycle has its own boot_id;
// * the MPU is absent (reads as all ones, which stops embassy-rp's core 1
//   at a UDF): its registers are kept per core, not enforced;
// * UDF/BKPT in the firmware and SYSRESETREQ do nothing: the harness
//   records them as faults (a test fails on any) and resets on the latter;
// * pad pull-ups do not drive input levels: a small board model does.
// (The USB gaps are worked around in usbhost.js.)
//
// Time is the emulator's: `nanos` counts from power-on and only advances
// when the harness runs the chip, so a test steps it exactly.

import { RP2040 } from 'rp2040js';
import { parseUf2 } from './uf2.js';

const FLASH_BASE = 0x10000000;
const BOOT2_SIZE = 0x100;
const NS_PER_CYCLE = 8; // 125 MHz, what embassy-rp sets clk_sys to

// IRQ numbers (RP2040 datasheet, 2.3.2).
const IRQ_IO_BANK0 = 13;
const IRQ_SIO_PROC0 = 15;
const IRQ_SIO_PROC1 = 16;

// SIO offsets.
const SIO_CPUID = 0x000;
const SIO_FIFO_ST = 0x050;
const SIO_FIFO_WR = 0x054;
const SIO_FIFO_RD = 0x058;
const FIFO_VLD = 1;
const FIFO_RDY = 2;
const FIFO_WOF = 4;
const FIFO_ROE = 8;
const FIFO_DEPTH = 8;

// IO_BANK0: the PROC1 interrupt registers rp2040js leaves out.
const PROC1_INTE0 = 0x130;
const PROC1_INTF0 = 0x140;
const PROC1_INTS0 = 0x150;
const PROC1_INTS3 = 0x15c;

// The harness ROM. Addresses and table layout are the bootrom's
// documented ones (RP2040 datasheet 2.8.3): a 16-bit pointer to the
// function table at 0x14, to the data table at 0x16, to the lookup
// function at 0x18. Every ROM function is `bkpt #n; bx lr`: the breakpoint
// hands the call to JavaScript, which does the work on the registers.
const ROM_FUNC_TABLE = 0x100;
const ROM_DATA_TABLE = 0x180;
const ROM_LOOKUP = 0x200;
const ROM_STUBS = 0x240;
const BKPT_LOOKUP = 0xf0;
const BKPT_MISSING = 0xf1;
const THUMB_BX_LR = 0x4770;

const code = (s) => s.charCodeAt(0) | (s.charCodeAt(1) << 8);

/// The ROM functions the harness provides, by their two-letter table code.
const ROM_FUNCTIONS = [
  ['C4', 'memcpy44'],
  ['MC', 'memcpy'],
  ['M4', 'memset4'],
  ['MS', 'memset'],
  ['IF', 'connect_internal_flash'],
  ['EX', 'flash_exit_xip'],
  ['FC', 'flash_flush_cache'],
  ['CX', 'flash_enter_cmd_xip'],
];

/// A quiet logger: rp2040js reports unimplemented registers and
/// instructions through it. Warnings and errors are kept (a test can show
/// them); the core's SEV, which rp2040js only logs, is turned into the
/// event it is on the chip.
class ChipLogger {
  constructor(onSev, onFault) {
    this.onSev = onSev;
    this.onFault = onFault;
    this.warnings = [];
  }
  debug() {}
  info(_component, message) {
    if (message === 'SEV') {
      this.onSev();
    }
  }
  warn(component, message) {
    if (this.warnings.length < 200) {
      this.warnings.push(`${component}: ${message}`);
    }
    // An instruction the emulator cannot execute, or an access outside
    // every memory and peripheral, means the run proves nothing past it.
    // (Registers of peripherals it does not model, such as VREG, only warn.)
    if (/not implemented yet|invalid (memory|SIO) address|undefined address/i.test(message)) {
      this.onFault(`${component}: ${message}`);
    }
  }
  error(component, message) {
    this.warn(component, message);
  }
}

/// xorshift32: the ring oscillator's noise, reproducible per seed.
function noise(seed) {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x & 1;
  };
}

export class Pico {
  /// `uf2`: the file's bytes. `uniqueId`: the flash chip's 8-byte id.
  /// `vsysMv`: the supply the VSYS/3 divider shows on ADC3.
  constructor({ uf2, uniqueId, name = 'pico', vsysMv = 5000, seed = 1 }) {
    this.name = name;
    this.blocks = parseUf2(uf2);
    this.uniqueId = Uint8Array.from(uniqueId);
    this.vsysMv = vsysMv;
    this.seed = seed;
    this.boots = 0;
    /// What the firmware asked of the chip that the harness could not
    /// give (a missing ROM function, a reset request): a test fails on it.
    this.faults = [];
    /// External drivers of GPIO inputs: pin -> boolean (undefined: none,
    /// the pad's pull decides).
    this.external = new Map();
    /// Listeners of pin levels: (pin, high, nanos) on every change.
    this.pinListeners = [];
    this.onPowerOn = [];
    this.powerOn();
  }

  /// A power cycle: a new chip (registers, RAM, timer at 0) with the same
  /// flash and id. Listeners survive; the USB host re-attaches in onPowerOn.
  powerOn() {
    this.boots += 1;
    const rp = new RP2040();
    this.rp = rp;
    this.logger = new ChipLogger(
      () => this.sev(),
      (what) => this.faults.length < 50 && this.faults.push(what),
    );
    rp.logger = this.logger;
    rp.loadBootrom(this.buildRom());
    // loadBootrom() erased the flash; write the image after it.
    for (const { address, data } of this.blocks) {
      const offset = address - FLASH_BASE;
      if (offset < 0 || offset + data.length > rp.flash.length) {
        throw new Error(`UF2 block at 0x${address.toString(16)} is outside the flash`);
      }
      rp.flash.set(data, offset);
    }
    rp.onBreak = (n) => this.onBreak(n);
    this.core0 = rp.core;
    this.CoreClass = rp.core.constructor;
    this.core1 = new this.CoreClass(rp);
    this.core1Running = false;
    this.core1Held = false;
    this.launch = [];
    this.fifo = [[], []]; // fifo[n]: words waiting for core n to read
    this.fifoErr = [0, 0];
    this.proc1Inte = new Array(30).fill(0);
    this.proc1Intf = new Array(30).fill(0);
    this.ssiQueue = [];
    this.rosc = noise(this.seed * 7919 + this.boots);
    this.patchInterrupts();
    this.patchSio();
    this.patchIo();
    this.patchPsm();
    this.patchSsi();
    this.patchUnmodelled();
    this.patchPins();
    this.patchReset();
    this.setVsys(this.vsysMv);
    // Where boot2 leaves the chip: XIP on, VTOR at the vector table.
    const vectors = FLASH_BASE + BOOT2_SIZE;
    this.core0.VTOR = vectors;
    this.core0.SP = rp.readUint32(vectors);
    this.core0.PC = rp.readUint32(vectors + 4) & ~1;
    for (const f of this.onPowerOn) {
      f(this);
    }
  }

  /// The supply on VSYS, as the Pico's VSYS/3 divider puts it on ADC3
  /// (12 bits of the 3.3 V reference).
  setVsys(mv) {
    this.vsysMv = mv;
    this.rp.adc.channelValues[3] = Math.min(4095, Math.round((mv / 3 / 3300) * 4095));
  }

  get nanos() {
    return this.rp.clock.nanos;
  }

  get micros() {
    return this.rp.clock.nanos / 1000;
  }

  buildRom() {
    const rom = new Uint8Array(16 * 1024);
    const view = new DataView(rom.buffer);
    view.setUint32(0x00, 0x20042000, true);
    rom.set([0x4d, 0x75, 0x01, 0x03], 0x10); // 'M' 'u' 1, version 3 (B2)
    view.setUint16(0x14, ROM_FUNC_TABLE, true);
    view.setUint16(0x16, ROM_DATA_TABLE, true);
    view.setUint16(0x18, ROM_LOOKUP | 1, true);
    view.setUint16(ROM_LOOKUP, 0xbe00 | BKPT_LOOKUP, true);
    view.setUint16(ROM_LOOKUP + 2, THUMB_BX_LR, true);
    view.setUint16(ROM_LOOKUP + 4, 0xbe00 | BKPT_MISSING, true);
    view.setUint16(ROM_LOOKUP + 6, THUMB_BX_LR, true);
    this.romByCode = new Map();
    ROM_FUNCTIONS.forEach(([tag, fn], i) => {
      const stub = ROM_STUBS + 4 * i;
      view.setUint16(stub, 0xbe00 | i, true);
      view.setUint16(stub + 2, THUMB_BX_LR, true);
      view.setUint16(ROM_FUNC_TABLE + 4 * i, code(tag), true);
      view.setUint16(ROM_FUNC_TABLE + 4 * i + 2, stub | 1, true);
      this.romByCode.set(code(tag), { stub, fn });
    });
    // Both tables end with a zero code; the data table has nothing else.
    return new Uint32Array(rom.buffer);
  }

  /// The core executing now (the one whose registers a ROM call uses).
  get current() {
    return this.rp.core;
  }

  onBreak(n) {
    const core = this.current;
    const r = core.registers;
    const at = core.PC - core.breakRewind;
    if (at >= 0x4000) {
      // A UDF or BKPT in the firmware: a HardFault on the chip. rp2040js
      // would run on past it; the harness records it and parks the core.
      const which = core === this.core1 ? 1 : 0;
      this.faults.push(`core ${which}: UDF/BKPT #${n} at 0x${at.toString(16)} (a HardFault on the chip)`);
      core.PC = at;
      core.waiting = true;
      core.halted = true;
      return;
    }
    if (n === BKPT_LOOKUP) {
      const entry = this.romByCode.get(r[1] & 0xffff);
      if (entry) {
        r[0] = entry.stub | 1;
      } else {
        const tag = String.fromCharCode(r[1] & 0xff, (r[1] >> 8) & 0xff);
        this.faults.push(`ROM function '${tag}' looked up: the harness ROM does not provide it`);
        this.lastMissing = tag;
        r[0] = (ROM_LOOKUP + 4) | 1;
      }
      return;
    }
    if (n === BKPT_MISSING) {
      this.faults.push(`ROM function '${this.lastMissing}' called`);
      return;
    }
    const entry = ROM_FUNCTIONS[n];
    if (!entry) {
      this.faults.push(`breakpoint #${n} at 0x${(core.PC - 2).toString(16)}`);
      return;
    }
    const rp = this.rp;
    switch (entry[1]) {
      case 'memcpy44':
      case 'memcpy': {
        const [dst, src, len] = [r[0], r[1], r[2]];
        for (let i = 0; i < len; i++) {
          rp.writeUint8(dst + i, rp.readUint8(src + i));
        }
        break; // returns dst, already in r0
      }
      case 'memset4':
      case 'memset': {
        const [dst, value, len] = [r[0], r[1], r[2]];
        for (let i = 0; i < len; i++) {
          rp.writeUint8(dst + i, value & 0xff);
        }
        break;
      }
      default:
        // connect_internal_flash, flash_exit_xip, flash_flush_cache,
        // flash_enter_cmd_xip: the emulated flash is always readable at
        // its XIP address, so there is no mode to change.
        break;
    }
  }

  /// SEV: the event register of both cores is set; a core asleep in WFE
  /// wakes.
  sev() {
    for (const core of [this.core0, this.core1]) {
      if (core.waiting) {
        core.waiting = false;
      } else {
        core.eventRegistered = true;
      }
    }
  }

  patchInterrupts() {
    const rp = this.rp;
    // A peripheral's interrupt line reaches both cores' NVICs.
    rp.setInterrupt = (irq, value) => {
      this.core0.setInterrupt(irq, value);
      this.core1.setInterrupt(irq, value);
    };
    // IO_IRQ_BANK0 goes to each core through its own enable/force masks.
    rp.updateIOInterrupt = () => {
      let proc0 = false;
      let proc1 = false;
      rp.gpio.forEach((pin, i) => {
        if (pin.irqValue) {
          proc0 = true;
        }
        if ((pin.irqStatus & this.proc1Inte[i]) | this.proc1Intf[i]) {
          proc1 = true;
        }
      });
      this.core0.setInterrupt(IRQ_IO_BANK0, proc0);
      this.core1.setInterrupt(IRQ_IO_BANK0, proc1);
    };
  }

  fifoIrqs() {
    const level = (n) => this.fifo[n].length > 0 || this.fifoErr[n] !== 0;
    this.core0.setInterrupt(IRQ_SIO_PROC0, level(0));
    this.core1.setInterrupt(IRQ_SIO_PROC1, level(1));
  }

  patchSio() {
    const sio = this.rp.sio;
    const read = sio.readUint32.bind(sio);
    const write = sio.writeUint32.bind(sio);
    const me = () => (this.rp.core === this.core1 ? 1 : 0);
    sio.readUint32 = (offset) => {
      switch (offset) {
        case SIO_CPUID:
          return me();
        case SIO_FIFO_ST: {
          const n = me();
          const other = this.fifo[1 - n];
          return (
            (this.fifo[n].length ? FIFO_VLD : 0) |
            (other.length < FIFO_DEPTH ? FIFO_RDY : 0) |
            this.fifoErr[n]
          );
        }
        case SIO_FIFO_RD: {
          const n = me();
          if (!this.fifo[n].length) {
            this.fifoErr[n] |= FIFO_ROE;
            this.fifoIrqs();
            return 0;
          }
          const value = this.fifo[n].shift();
          this.fifoIrqs();
          return value;
        }
        default:
          return read(offset);
      }
    };
    sio.writeUint32 = (offset, value) => {
      switch (offset) {
        case SIO_FIFO_ST:
          // Any write clears the sticky error flags.
          this.fifoErr[me()] = 0;
          this.fifoIrqs();
          return;
        case SIO_FIFO_WR: {
          const n = me();
          const to = 1 - n;
          if (this.fifo[to].length >= FIFO_DEPTH) {
            this.fifoErr[n] |= FIFO_WOF;
          } else if (to === 1 && !this.core1Running) {
            this.core1Rom(value >>> 0);
          } else {
            this.fifo[to].push(value >>> 0);
          }
          this.fifoIrqs();
          return;
        }
        default:
          write(offset, value);
      }
    };
  }

  /// Core 1 in the bootrom: the launch handshake of the datasheet
  /// (2.8.2, "Launching code on processor core 1"): every word is echoed;
  /// 0, 0, 1, vector table, stack pointer, entry point starts it; a word
  /// out of sequence starts over.
  core1Rom(word) {
    if (this.core1Held) {
      return; // in reset: the word is lost, no echo
    }
    const fixed = [0, 0, 1];
    const seq = this.launch;
    if (seq.length < 3) {
      if (word === fixed[seq.length]) {
        seq.push(word);
      } else {
        seq.length = 0;
        if (word === 0) {
          seq.push(0);
        }
      }
    } else {
      seq.push(word);
    }
    this.fifo[0].push(word);
    if (seq.length === 6) {
      const [, , , vtor, sp, entry] = seq;
      this.launch = [];
      const core1 = this.core1;
      core1.VTOR = vtor;
      core1.SP = sp;
      core1.PC = entry & ~1;
      this.core1Running = true;
    }
  }

  patchIo() {
    const io = this.rp.peripherals[0x40014];
    const read = io.readUint32.bind(io);
    const write = io.writeUint32.bind(io);
    const pins = (offset) => {
      const first = (offset & 0xf) * 2;
      return [...Array(8).keys()].map((i) => first + i).filter((i) => i < 30);
    };
    io.readUint32 = (offset) => {
      if (offset >= PROC1_INTE0 && offset <= PROC1_INTS3) {
        const base = offset & ~0xf;
        let value = 0;
        for (const [k, i] of pins(offset).entries()) {
          const pin = this.rp.gpio[i];
          const bits =
            base === PROC1_INTE0
              ? this.proc1Inte[i]
              : base === PROC1_INTF0
                ? this.proc1Intf[i]
                : (pin.irqStatus & this.proc1Inte[i]) | this.proc1Intf[i];
          value |= bits << (4 * k);
        }
        return value >>> 0;
      }
      return read(offset);
    };
    io.writeUint32 = (offset, value) => {
      if (offset >= PROC1_INTE0 && offset < PROC1_INTS0) {
        const base = offset & ~0xf;
        for (const [k, i] of pins(offset).entries()) {
          const bits = (value >>> (4 * k)) & 0xf;
          if (base === PROC1_INTE0) {
            this.proc1Inte[i] = bits;
          } else {
            this.proc1Intf[i] = bits;
          }
        }
        this.rp.updateIOInterrupt();
        return;
      }
      if (offset >= PROC1_INTS0 && offset <= PROC1_INTS3) {
        return; // read-only
      }
      write(offset, value);
    };
  }

  patchPsm() {
    const psm = this.rp.peripherals[0x40010];
    const write = psm.writeUint32.bind(psm);
    const PROC1 = 1 << 16;
    psm.writeUint32 = (offset, value) => {
      write(offset, value);
      if (offset === 0x04) {
        if (value & PROC1) {
          // Forced off: core 1 is held in reset.
          this.core1Held = true;
          this.core1Running = false;
          this.core1 = new this.CoreClass(this.rp);
          this.launch = [];
        } else if (this.core1Held) {
          // Released: back in the bootrom, waiting for the handshake.
          this.core1Held = false;
        }
      }
    };
  }

  /// The flash chip's Read Unique ID (0x4B): four dummy bytes, then the
  /// 64-bit id, clocked out in the SSI's EEPROM-read mode (TMOD 3) that
  /// embassy-rp's flash_unique_id uses. Everything else goes to rp2040js.
  patchSsi() {
    const ssi = this.rp.peripherals[0x18000];
    const read = ssi.readUint32.bind(ssi);
    const write = ssi.writeUint32.bind(ssi);
    const DR0 = 0x60;
    ssi.writeUint32 = (offset, value) => {
      if (offset === DR0 && (value & 0xff) === 0x4b && ((ssi.crtlr0 >> 8) & 3) === 3) {
        this.ssiQueue = [0, 0, 0, 0, ...this.uniqueId];
        this.uniqueIdReads = (this.uniqueIdReads || 0) + 1;
        return;
      }
      write(offset, value);
    };
    ssi.readUint32 = (offset) => {
      if (offset === DR0 && this.ssiQueue.length) {
        return this.ssiQueue.shift();
      }
      return read(offset);
    };
  }

  patchUnmodelled() {
    const rp = this.rp;
    const store = new Map();
    const stub = (name, reads) => ({
      readUint32: (offset) => (reads(offset) ?? store.get(`${name}:${offset}`) ?? 0) >>> 0,
      writeUint32: (offset, value) => store.set(`${name}:${offset}`, value),
      writeUint32Atomic(offset, value, type) {
        const old = this.readUint32(offset);
        const next = type === 1 ? old ^ value : type === 2 ? old | value : type === 3 ? old & ~value : value;
        this.writeUint32(offset, next >>> 0);
      },
    });
    // XIP_CTRL (0x14000000): STREAM_CTR reads 0, no background stream.
    rp.peripherals[0x14000] = stub('xip', (offset) => (offset === 0x34 ? 0 : undefined));
    // ROSC (0x40060000): STATUS stable and enabled, RANDOMBIT noise.
    rp.peripherals[0x40060] = stub('rosc', (offset) => {
      if (offset === 0x18) return 0x80001000;
      if (offset === 0x1c) return this.rosc();
      return undefined;
    });
  }

  /// The pads as a board sees them: a pin's input follows an external
  /// driver if there is one, else its own output if enabled, else its
  /// pull-up or pull-down. Output levels are reported to pin listeners.
  patchPins() {
    const rp = this.rp;
    this.levels = rp.gpio.map(() => undefined);
    rp.gpio.forEach((pin, i) => {
      pin.addListener(() => this.settle(i));
    });
    for (let i = 0; i < rp.gpio.length; i++) {
      this.settle(i);
    }
  }

  /// The level on pin `i` now, as the wire has it.
  level(i) {
    const pin = this.rp.gpio[i];
    const ext = this.external.get(i);
    if (pin.outputEnable) {
      return pin.outputValue;
    }
    if (ext !== undefined) {
      return ext;
    }
    if (pin.pullupEnabled) {
      return true;
    }
    if (pin.pulldownEnabled) {
      return false;
    }
    // Floating: the modules' own pull-ups (TM1637 lines) or nothing.
    return this.pulledUp?.has(i) ?? false;
  }

  settle(i) {
    const pin = this.rp.gpio[i];
    const high = this.level(i);
    if (pin.rawInputValue !== high) {
      pin.setInputValue(high);
      // rp2040js re-evaluates the GPIO interrupt only when core 0's view
      // of it changes; core 1's (PROC1) is evaluated here.
      this.rp.updateIOInterrupt();
    }
    if (this.levels[i] !== high) {
      this.levels[i] = high;
      for (const f of this.pinListeners) {
        f(i, high, this.nanos);
      }
    }
  }

  /// Drives pin `i` from outside (true/false), or lets it go (undefined).
  drive(i, value) {
    if (value === undefined) {
      this.external.delete(i);
    } else {
      this.external.set(i, value);
    }
    this.settle(i);
  }

  /// SCB AIRCR.SYSRESETREQ (the firmware's panic handler): recorded as a
  /// fault and carried out as a reset of the chip.
  patchReset() {
    const ppb = this.rp.ppb;
    const read = ppb.readUint32.bind(ppb);
    const write = ppb.writeUint32.bind(ppb);
    // The MPU (TYPE, CTRL, RNR, RBAR, RASR) is unmodelled in rp2040js and
    // reads as all ones, which embassy-rp takes for "already configured"
    // and stops core 1 with a UDF. Its registers are kept per core here;
    // the protection itself (the stack guard) is not enforced.
    const MPU = { 0xd90: 'type', 0xd94: 'ctrl', 0xd98: 'rnr', 0xd9c: 'rbar', 0xda0: 'rasr' };
    const mpu = () => (this.rp.core.mpu ??= { type: 0x800, ctrl: 0, rnr: 0, rbar: 0, rasr: 0 });
    ppb.readUint32 = (offset) => (MPU[offset] ? mpu()[MPU[offset]] >>> 0 : read(offset));
    ppb.writeUint32 = (offset, value) => {
      if (MPU[offset]) {
        if (MPU[offset] !== 'type') mpu()[MPU[offset]] = value >>> 0;
        return;
      }
      if (offset === 0xd0c && (value >>> 16) === 0x05fa && value & 4) {
        this.faults.push(`the firmware asked for a system reset at ${this.micros.toFixed(0)} µs`);
        this.resetRequested = true;
        return;
      }
      write(offset, value);
    };
  }

  /// Runs both cores until the clock reaches `targetNanos` (or `budget`
  /// instructions ran); returns whether the target was reached. While no
  /// core has work, time jumps to the next alarm (timer, USB, ADC).
  runUntil(targetNanos, budget = Infinity) {
    const rp = this.rp;
    const clock = rp.clock;
    const c0 = this.core0;
    let n = 0;
    while (clock.nanos < targetNanos) {
      if (this.resetRequested) {
        this.resetRequested = false;
        this.powerOn();
        return false;
      }
      if (n >= budget) {
        return false;
      }
      const c1 = this.core1;
      const run0 = !c0.waiting && !c0.halted;
      const run1 = this.core1Running && !c1.waiting && !c1.halted;
      if (!run0 && !run1) {
        const next = clock.nextAlarm ? clock.nextAlarm.nanos : Infinity;
        clock.tick(Math.max(0, Math.min(next, targetNanos) - clock.nanos));
        continue;
      }
      let cycles = 0;
      if (run0) {
        cycles = c0.executeInstruction();
      }
      if (run1) {
        rp.core = c1;
        const c = c1.executeInstruction();
        rp.core = c0;
        if (c > cycles) cycles = c;
      }
      clock.tick(cycles * NS_PER_CYCLE);
      n++;
    }
    return true;
  }

  /// Runs for `micros` of emulated time.
  runFor(micros) {
    this.runUntil(this.nanos + micros * 1000);
  }

  /// Schedules `f` at emulated instant `atNanos` (exactly: the clock stops
  /// there and `f` runs between two instructions).
  at(atNanos, f) {
    const alarm = this.rp.clock.createAlarm(f);
    alarm.schedule(Math.max(0, atNanos - this.nanos));
    return alarm;
  }
}
