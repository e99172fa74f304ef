//! The grid the view draws into: styled characters, clipped writes, frames.

/// How a character is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tone {
    #[default]
    Normal,
    Dim,
    /// Lit LED segments.
    Led,
    /// LED segments of the side not running.
    LedIdle,
    Good,
    Warn,
    Bad,
    Title,
    /// Header/footer bars.
    Bar,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub ch: char,
    pub tone: Tone,
}

/// A width × height grid of cells; writes outside it are clipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Canvas {
    pub width: u16,
    pub height: u16,
    pub cells: Vec<Cell>,
}

impl Canvas {
    pub fn new(width: u16, height: u16) -> Self {
        Canvas {
            width,
            height,
            cells: vec![
                Cell {
                    ch: ' ',
                    tone: Tone::Normal
                };
                usize::from(width) * usize::from(height)
            ],
        }
    }

    pub fn put(&mut self, x: i32, y: i32, ch: char, tone: Tone) {
        if x < 0 || y < 0 || x >= i32::from(self.width) || y >= i32::from(self.height) {
            return;
        }
        let index = y as usize * usize::from(self.width) + x as usize;
        self.cells[index] = Cell { ch, tone };
    }

    /// Writes `text` from (x, y); returns the column after it.
    pub fn text(&mut self, x: i32, y: i32, text: &str, tone: Tone) -> i32 {
        let mut column = x;
        for ch in text.chars() {
            self.put(column, y, ch, tone);
            column += 1;
        }
        column
    }

    pub fn fill_row(&mut self, y: i32, tone: Tone) {
        for x in 0..i32::from(self.width) {
            self.put(x, y, ' ', tone);
        }
    }

    /// A box-drawing frame around (x, y, w, h) with an optional title.
    pub fn frame(&mut self, x: i32, y: i32, w: i32, h: i32, title: &str, tone: Tone) {
        if w < 2 || h < 2 {
            return;
        }
        for i in 1..w - 1 {
            self.put(x + i, y, '─', tone);
            self.put(x + i, y + h - 1, '─', tone);
        }
        for j in 1..h - 1 {
            self.put(x, y + j, '│', tone);
            self.put(x + w - 1, y + j, '│', tone);
        }
        self.put(x, y, '┌', tone);
        self.put(x + w - 1, y, '┐', tone);
        self.put(x, y + h - 1, '└', tone);
        self.put(x + w - 1, y + h - 1, '┘', tone);
        if !title.is_empty() && w > 4 {
            let room = (w - 4) as usize;
            let title: String = format!(" {title} ").chars().take(room).collect();
            self.text(x + 2, y, &title, Tone::Title);
        }
    }

    /// The grid as text, one line per row, trailing spaces removed.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for row in self.cells.chunks(usize::from(self.width).max(1)) {
            let line: String = row.iter().map(|c| c.ch).collect();
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}
