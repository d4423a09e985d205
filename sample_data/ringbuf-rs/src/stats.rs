//! Running statistics over the last `n` samples.

use crate::{CapacityError, RingBuffer};

/// Keeps the last `size` samples and their sum, so the mean is O(1).
#[derive(Debug, Clone)]
pub struct Window {
    samples: RingBuffer<f64>,
    sum: f64,
}

impl Window {
    pub fn new(size: usize) -> Result<Self, CapacityError> {
        Ok(Self { samples: RingBuffer::with_capacity(size)?, sum: 0.0 })
    }

    /// Adds a sample, forgetting the oldest one once the window is full.
    pub fn add(&mut self, sample: f64) {
        if let Some(old) = self.samples.push_overwrite(sample) {
            self.sum -= old;
        }
        self.sum += sample;
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn mean(&self) -> Option<f64> {
        if self.is_empty() {
            None
        } else {
            Some(self.sum / self.len() as f64)
        }
    }

    pub fn min(&self) -> Option<f64> {
        self.samples.iter().copied().reduce(f64::min)
    }

    pub fn max(&self) -> Option<f64> {
        self.samples.iter().copied().reduce(f64::max)
    }

    /// Population variance of the samples in the window.
    pub fn variance(&self) -> Option<f64> {
        let mean = self.mean()?;
        let squares: f64 = self.samples.iter().map(|x| (x - mean).powi(2)).sum();
        Some(squares / self.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::Window;

    #[test]
    fn mean_follows_the_last_samples() {
        let mut window = Window::new(3).unwrap();
        for x in [1.0, 2.0, 3.0, 10.0] {
            window.add(x);
        }
        assert_eq!(window.mean(), Some(5.0));
        assert_eq!(window.min(), Some(2.0));
        assert_eq!(window.max(), Some(10.0));
    }

    #[test]
    fn empty_window_has_no_statistics() {
        let window = Window::new(4).unwrap();
        assert_eq!(window.mean(), None);
        assert_eq!(window.variance(), None);
    }
}
