//! A fixed-capacity ring buffer.
//!
//! [`RingBuffer`] stores up to `capacity` items. Pushing into a full buffer
//! either fails ([`RingBuffer::try_push`]) or overwrites the oldest item
//! ([`RingBuffer::push_overwrite`]). [`Window`] builds running statistics
//! on top of it.

mod buffer;
mod error;
mod iter;
pub mod stats;

pub use buffer::RingBuffer;
pub use error::{CapacityError, Full};
pub use iter::Iter;
pub use stats::Window;
