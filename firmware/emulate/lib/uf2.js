// UF2 files (the format a Pico in BOOTSEL mode takes): 512-byte blocks,
// each carrying up to 476 bytes for one flash address. Read here from the
// format's published layout, so the emulator is loaded with exactly the
// bytes a maker drags onto the board.

const MAGIC_START0 = 0x0a324655; // "UF2\n"
const MAGIC_START1 = 0x9e5d5157;
const MAGIC_END = 0x0ab16f30;
const FLAG_NOT_MAIN_FLASH = 0x00000001;
const FLAG_FAMILY_ID = 0x00002000;
export const RP2040_FAMILY_ID = 0xe48bff56;
const BLOCK = 512;

/// The blocks of a UF2 image as { address, data }; throws on a malformed
/// file (a bad magic, a payload past its block, a foreign family): a test
/// must not boot half an image.
export function parseUf2(bytes) {
  if (bytes.length === 0 || bytes.length % BLOCK !== 0) {
    throw new Error(`UF2: ${bytes.length} bytes is not a whole number of ${BLOCK}-byte blocks`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const blocks = [];
  for (let offset = 0; offset < bytes.length; offset += BLOCK) {
    const word = (i) => view.getUint32(offset + i, true);
    if (word(0) !== MAGIC_START0 || word(4) !== MAGIC_START1 || word(BLOCK - 4) !== MAGIC_END) {
      throw new Error(`UF2: bad magic in block at byte ${offset}`);
    }
    const flags = word(8);
    const address = word(12);
    const size = word(16);
    const family = word(28);
    if (size > 476) {
      throw new Error(`UF2: block at byte ${offset} claims ${size} payload bytes`);
    }
    if (flags & FLAG_FAMILY_ID && family !== RP2040_FAMILY_ID) {
      throw new Error(`UF2: block at byte ${offset} is for family 0x${family.toString(16)}, not the RP2040`);
    }
    if (flags & FLAG_NOT_MAIN_FLASH) {
      continue;
    }
    blocks.push({ address, data: bytes.subarray(offset + 32, offset + 32 + size) });
  }
  return blocks;
}
