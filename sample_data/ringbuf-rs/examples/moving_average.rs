//! Smooths the samples in benches/fixtures/samples.bin (little-endian u16
//! readings) with a moving average and prints every tenth value.

use std::fs;

use ringbuf::Window;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/fixtures/samples.bin");
    let bytes = fs::read(path)?;
    let mut window = Window::new(8)?;
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        let reading = u16::from_le_bytes([pair[0], pair[1]]);
        window.add(f64::from(reading));
        if i % 10 == 9 {
            println!("{:4} {:8.1}", i + 1, window.mean().unwrap_or_default());
        }
    }
    Ok(())
}
