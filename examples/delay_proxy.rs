//! A loopback TCP proxy that delays each direction by a fixed number of microseconds, for the
//! PostgreSQL benchmark (`bench/postgres-node.mjs`, started through `bench/pg-proxy.mjs`'s
//! `startPreciseProxy`).
//!
//! Why not the JavaScript proxy in `bench/pg-proxy.mjs`: Node's timers count whole milliseconds
//! (a "3 ms" round trip measured ~3.5 ms, with up to a millisecond of jitter each way), and that
//! proxy ran on the benchmark's own event loop, the host's loop the benchmark measures. Here
//! each direction of each connection has a reader thread that stamps every chunk with its due
//! time and a writer thread that sleeps until just before then, spins the last 0.2 ms (the kernel
//! wakes a sleeper up to ~0.1 ms late) and forwards it. Chunks stay in order and are never merged or split. An end of
//! stream is passed on as a half close, at its due time too.
//!
//! ```text
//! cargo run --example delay_proxy -- 127.0.0.1:5432 1500 1500
//! ```
//! prints `listening <port>` once bound to 127.0.0.1, then serves until its standard input
//! closes (so it never outlives the benchmark that started it).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// What a reader hands its writer: a chunk and when it is due, or the end of the stream.
enum Piece {
    Chunk(Instant, Vec<u8>),
    End(Instant),
}

fn main() {
    if let Err(message) = run() {
        eprintln!("delay_proxy: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [target, up, down] = args.as_slice() else {
        return Err("usage: delay_proxy <target host:port on loopback> <up µs> <down µs>".into());
    };
    if !(target.starts_with("127.")
        || target.starts_with("localhost:")
        || target.starts_with("[::1]:"))
    {
        return Err(format!("only a loopback target, not {target}"));
    }
    let micros = |s: &str| {
        s.parse::<u64>()
            .ok()
            .filter(|us| *us <= 1_000_000)
            .map(Duration::from_micros)
    };
    let (Some(up), Some(down)) = (micros(up), micros(down)) else {
        return Err(format!(
            "a delay must be whole microseconds in 0..=1000000, not {up} / {down}"
        ));
    };
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    println!("listening {port}");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    // Leave when the parent closes our standard input (or dies).
    thread::spawn(|| {
        let mut sink = [0u8; 64];
        while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
        std::process::exit(0);
    });
    for client in listener.incoming() {
        let Ok(client) = client else { continue };
        let target = target.clone();
        thread::spawn(move || {
            if let Err(e) = serve(client, &target, up, down) {
                eprintln!("delay_proxy: connection to {target} failed: {e}");
            }
        });
    }
    Ok(())
}

/// Connects `client` to `target` and forwards both ways with the given delays.
fn serve(client: TcpStream, target: &str, up: Duration, down: Duration) -> std::io::Result<()> {
    let server = TcpStream::connect(target)?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    forward(client.try_clone()?, server.try_clone()?, up);
    forward(server, client, down);
    Ok(())
}

/// How long before a chunk is due its writer stops sleeping and spins: the kernel wakes a
/// sleeping thread up to ~0.1 ms late, which would add ~0.3 ms to every round trip.
const SPIN: Duration = Duration::from_micros(200);

/// Returns at `due`, within a few microseconds: sleeps most of the way, spins the rest.
fn wait_until(due: Instant) {
    let now = Instant::now();
    if due > now + SPIN {
        thread::sleep(due - now - SPIN);
    }
    while Instant::now() < due {
        std::hint::spin_loop();
    }
}

/// Forwards what `from` sends to `to`, each chunk `delay` after it arrived.
fn forward(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (send, receive) = mpsc::channel::<Piece>();
    thread::spawn(move || {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if send
                        .send(Piece::Chunk(Instant::now() + delay, buffer[..n].to_vec()))
                        .is_err()
                    {
                        return;
                    }
                }
            }
        }
        let _ = send.send(Piece::End(Instant::now() + delay));
    });
    thread::spawn(move || {
        for piece in receive {
            let due = match &piece {
                Piece::Chunk(due, _) | Piece::End(due) => *due,
            };
            wait_until(due);
            match piece {
                Piece::Chunk(_, bytes) => {
                    if to.write_all(&bytes).is_err() {
                        break;
                    }
                }
                Piece::End(_) => break,
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
