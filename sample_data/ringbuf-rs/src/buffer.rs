use crate::error::{CapacityError, Full};
use crate::iter::Iter;

/// A queue with a fixed capacity, stored in one allocation.
#[derive(Debug, Clone)]
pub struct RingBuffer<T> {
    slots: Vec<Option<T>>,
    head: usize, // index of the oldest item
    len: usize,
}

impl<T> RingBuffer<T> {
    /// Creates an empty buffer that holds up to `capacity` items.
    pub fn with_capacity(capacity: usize) -> Result<Self, CapacityError> {
        if capacity == 0 {
            return Err(CapacityError);
        }
        let slots = (0..capacity).map(|_| None).collect();
        Ok(Self { slots, head: 0, len: 0 })
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_full(&self) -> bool {
        self.len == self.capacity()
    }

    fn slot(&self, offset: usize) -> usize {
        (self.head + offset) % self.capacity()
    }

    /// Appends `item`, or hands it back inside [`Full`] if there is no room.
    pub fn try_push(&mut self, item: T) -> Result<(), Full<T>> {
        if self.is_full() {
            return Err(Full(item));
        }
        let tail = self.slot(self.len);
        self.slots[tail] = Some(item);
        self.len += 1;
        Ok(())
    }

    /// Appends `item`, dropping and returning the oldest item when full.
    pub fn push_overwrite(&mut self, item: T) -> Option<T> {
        if !self.is_full() {
            let tail = self.slot(self.len);
            self.slots[tail] = Some(item);
            self.len += 1;
            return None;
        }
        let evicted = self.slots[self.head].replace(item);
        self.head = self.slot(1);
        evicted
    }

    /// Removes and returns the oldest item.
    pub fn pop(&mut self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        let item = self.slots[self.head].take();
        self.head = self.slot(1);
        self.len -= 1;
        item
    }

    /// The item `index` places after the oldest one.
    pub fn get(&self, index: usize) -> Option<&T> {
        if index >= self.len {
            return None;
        }
        self.slots[self.slot(index)].as_ref()
    }

    pub fn oldest(&self) -> Option<&T> {
        self.get(0)
    }

    pub fn newest(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|last| self.get(last))
    }

    pub fn clear(&mut self) {
        while self.pop().is_some() {}
    }

    /// Iterates from the oldest item to the newest.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter::new(self)
    }
}

impl<'a, T> IntoIterator for &'a RingBuffer<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
