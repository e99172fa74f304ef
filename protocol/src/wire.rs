//! Bounds-checked little-endian readers and writers: every access checks the
//! length first and reports a value instead of panicking.

use crate::{BufferTooSmall, FrameError, Text};

pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn written(&self) -> &[u8] {
        self.buf.get(..self.pos).unwrap_or(&[])
    }

    pub(crate) fn bytes(&mut self, src: &[u8]) -> Result<(), BufferTooSmall> {
        let end = self.pos.checked_add(src.len()).ok_or(BufferTooSmall)?;
        self.buf
            .get_mut(self.pos..end)
            .ok_or(BufferTooSmall)?
            .copy_from_slice(src);
        self.pos = end;
        Ok(())
    }

    pub(crate) fn u8(&mut self, v: u8) -> Result<(), BufferTooSmall> {
        self.bytes(&[v])
    }

    pub(crate) fn u16(&mut self, v: u16) -> Result<(), BufferTooSmall> {
        self.bytes(&v.to_le_bytes())
    }

    pub(crate) fn u32(&mut self, v: u32) -> Result<(), BufferTooSmall> {
        self.bytes(&v.to_le_bytes())
    }

    pub(crate) fn u64(&mut self, v: u64) -> Result<(), BufferTooSmall> {
        self.bytes(&v.to_le_bytes())
    }

    /// A length byte, then the bytes.
    pub(crate) fn text<const N: usize>(&mut self, t: &Text<N>) -> Result<(), BufferTooSmall> {
        let b = t.as_bytes();
        self.u8(u8::try_from(b.len()).map_err(|_| BufferTooSmall)?)?;
        self.bytes(b)
    }
}

pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    fn take<const K: usize>(&mut self) -> Result<[u8; K], FrameError> {
        if self.buf.len() < K {
            return Err(FrameError::Malformed);
        }
        let (head, tail) = self.buf.split_at(K);
        let mut out = [0u8; K];
        out.copy_from_slice(head);
        self.buf = tail;
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, FrameError> {
        Ok(self.take::<1>()?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16, FrameError> {
        Ok(u16::from_le_bytes(self.take()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, FrameError> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, FrameError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    /// A length byte, then that many bytes of UTF-8, at most `N`.
    pub(crate) fn text<const N: usize>(&mut self) -> Result<Text<N>, FrameError> {
        let len = usize::from(self.u8()?);
        if len > N || self.buf.len() < len {
            return Err(FrameError::Malformed);
        }
        let (head, tail) = self.buf.split_at(len);
        self.buf = tail;
        Text::from_utf8(head).ok_or(FrameError::Malformed)
    }

    /// The payload must end here.
    pub(crate) fn finish(&self) -> Result<(), FrameError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(FrameError::Malformed)
        }
    }
}
