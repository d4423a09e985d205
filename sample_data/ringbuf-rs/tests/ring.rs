use ringbuf::{CapacityError, Full, RingBuffer};

#[test]
fn zero_capacity_is_rejected() {
    assert_eq!(RingBuffer::<u8>::with_capacity(0).unwrap_err(), CapacityError);
}

#[test]
fn try_push_returns_the_item_when_full() {
    let mut ring = RingBuffer::with_capacity(2).unwrap();
    ring.try_push('a').unwrap();
    ring.try_push('b').unwrap();
    assert_eq!(ring.try_push('c'), Err(Full('c')));
    assert_eq!(ring.len(), 2);
}

#[test]
fn overwrite_evicts_oldest_first() {
    let mut ring = RingBuffer::with_capacity(3).unwrap();
    let evicted: Vec<_> = (1..=5).filter_map(|n| ring.push_overwrite(n)).collect();
    assert_eq!(evicted, vec![1, 2]);
    assert_eq!(ring.iter().copied().collect::<Vec<_>>(), vec![3, 4, 5]);
    assert_eq!(ring.iter().rev().copied().collect::<Vec<_>>(), vec![5, 4, 3]);
    assert_eq!((ring.oldest(), ring.newest()), (Some(&3), Some(&5)));
}

#[test]
fn pop_wraps_around() {
    let mut ring = RingBuffer::with_capacity(2).unwrap();
    for round in 0..5 {
        ring.try_push(round).unwrap();
        assert_eq!(ring.pop(), Some(round));
    }
    assert!(ring.is_empty());
    assert_eq!(ring.pop(), None);
}
