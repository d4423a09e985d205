use crate::buffer::RingBuffer;

/// Borrowing iterator over a [`RingBuffer`], oldest item first.
pub struct Iter<'a, T> {
    buffer: &'a RingBuffer<T>,
    front: usize,
    back: usize,
}

impl<'a, T> Iter<'a, T> {
    pub(crate) fn new(buffer: &'a RingBuffer<T>) -> Self {
        Self { buffer, front: 0, back: buffer.len() }
    }
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        let item = self.buffer.get(self.front);
        self.front += 1;
        item
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let remaining = self.back - self.front;
        (remaining, Some(remaining))
    }
}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        self.buffer.get(self.back)
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}
