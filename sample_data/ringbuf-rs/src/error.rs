use std::fmt;

/// Returned by [`crate::RingBuffer::try_push`] when the buffer is full; gives
/// the rejected item back to the caller.
#[derive(Debug, PartialEq, Eq)]
pub struct Full<T>(pub T);

impl<T> fmt::Display for Full<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ring buffer is full")
    }
}

impl<T: fmt::Debug> std::error::Error for Full<T> {}

/// A buffer cannot be created with zero capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapacityError;

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ring buffer capacity must be at least 1")
    }
}

impl std::error::Error for CapacityError {}
