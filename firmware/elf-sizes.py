#!/usr/bin/env python3
"""Flash and RAM use of an ARM ELF, from its section headers (no binutils
needed): flash = allocated sections with contents (vector table, boot2,
code, read-only data, and the load image of .data); RAM = allocated
sections placed in the RP2040's SRAM (.data, which also holds the code that
must run from RAM, .bss, .uninit; core 1's stack is in .bss, core 0's stack
is the rest of RAM and not counted).

Usage: elf-sizes.py ELF...   prints one line per file: NAME FLASH RAM
Also checks a UF2 beside each ELF (same name, .uf2): its magic numbers and
the RP2040 family id on every block, and that it carries exactly the
flash bytes."""

import struct
import sys

SHF_ALLOC = 0x2
SRAM = (0x20000000, 0x20042000)
SHT_NOBITS = 8
UF2_MAGIC = (0x0A324655, 0x9E5D5157, 0x0AB16F30)
UF2_FAMILY_PRESENT = 0x00002000
RP2040_FAMILY = 0xE48BFF56


def sections(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        sys.exit(f"{path}: not a 32-bit little-endian ELF")
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
    for i in range(shnum):
        _name, stype, flags, addr, _off, size = struct.unpack_from(
            "<IIIIII", data, shoff + i * shentsize)
        yield stype, flags, addr, size


def sizes(path):
    flash = ram = 0
    for stype, flags, addr, size in sections(path):
        if not flags & SHF_ALLOC or size == 0:
            continue
        if stype != SHT_NOBITS:
            flash += size
        if SRAM[0] <= addr < SRAM[1]:
            ram += size
    return flash, ram


def check_uf2(path, flash):
    data = open(path, "rb").read()
    if not data or len(data) % 512:
        sys.exit(f"{path}: not a whole number of 512-byte UF2 blocks")
    payload = 0
    blocks = len(data) // 512
    for n in range(blocks):
        block = data[n * 512:(n + 1) * 512]
        m0, m1, flags, _addr, size, number, total, family = struct.unpack_from("<8I", block)
        end, = struct.unpack_from("<I", block, 508)
        if (m0, m1, end) != UF2_MAGIC:
            sys.exit(f"{path}: block {n} has bad magic numbers")
        if not flags & UF2_FAMILY_PRESENT or family != RP2040_FAMILY:
            sys.exit(f"{path}: block {n} is not for the RP2040 family")
        if number != n or total != blocks:
            sys.exit(f"{path}: block {n} numbered {number}/{total}")
        payload += size
    # elf2uf2 writes whole 256-byte pages: the payload covers the flash
    # bytes, rounded up per contiguous range.
    if payload < flash:
        sys.exit(f"{path}: carries {payload} bytes, the ELF has {flash} for flash")
    return blocks


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for elf in sys.argv[1:]:
        flash, ram = sizes(elf)
        uf2 = elf[:-4] + ".uf2" if elf.endswith(".elf") else None
        blocks = check_uf2(uf2, flash) if uf2 else 0
        print(f"{elf.rsplit('/', 1)[-1][:-4]} {flash} {ram} {blocks}")


if __name__ == "__main__":
    main()
