// Apache Curator's InterProcessMutex, InterProcessReadWriteLock and InterProcessSemaphoreV2,
// driven by lock-lab's interop tests and quick_bench.
//
//   hold  CONNECT PATH             acquire, print "acquired", release when a line arrives on stdin
//   try   CONNECT PATH WAIT_MS     print "waiting", then "acquired" (then release) or "timeout"
//   hold-read, hold-write, try-read, try-write: the same with the read or write lock of an
//         InterProcessReadWriteLock on PATH
//   permits CONNECT PATH MAX THREADS ROUNDS HOLD_MS
//         THREADS threads (own sessions) each take a lease of an InterProcessSemaphoreV2 on
//         PATH with MAX leases ROUNDS times, holding it HOLD_MS; per hold prints
//         "held <start µs> <end µs>" (wall clock, taken inside the hold), then "done"
//   bench CONNECT PATH PAIRS CLIENTS ROUNDS
//         uncontended PAIRS on one client, then CLIENTS clients (own sessions) taking the lock
//         ROUNDS times each; prints "uncontended <pairs/s>" and
//         "contended <pairs/s> <p50 wait ms> <p99 wait ms>"

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorLock {
    static CuratorFramework connect(String connect) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.newClient(
                connect, 10000, 5000, new ExponentialBackoffRetry(100, 3));
        client.start();
        if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no ZooKeeper session with " + connect);
        }
        return client;
    }

    // The mutex, or one side of a read-write lock, on PATH.
    static InterProcessMutex lockFor(String kind, CuratorFramework client, String path) {
        switch (kind) {
            case "mutex":
                return new InterProcessMutex(client, path);
            case "read":
                return new InterProcessReadWriteLock(client, path).readLock();
            case "write":
                return new InterProcessReadWriteLock(client, path).writeLock();
            default:
                throw new IllegalArgumentException("unknown lock kind " + kind);
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String connect = args[1];
        String path = args[2];
        String kind = mode.contains("-") ? mode.substring(mode.indexOf('-') + 1) : "mutex";
        mode = mode.contains("-") ? mode.substring(0, mode.indexOf('-')) : mode;
        switch (mode) {
            case "hold": {
                CuratorFramework client = connect(connect);
                InterProcessMutex mutex = lockFor(kind, client, path);
                mutex.acquire();
                System.out.println("acquired");
                System.out.flush();
                new BufferedReader(new InputStreamReader(System.in)).readLine();
                mutex.release();
                System.out.println("released");
                client.close();
                break;
            }
            case "try": {
                CuratorFramework client = connect(connect);
                InterProcessMutex mutex = lockFor(kind, client, path);
                System.out.println("waiting");
                System.out.flush();
                if (mutex.acquire(Long.parseLong(args[3]), TimeUnit.MILLISECONDS)) {
                    System.out.println("acquired");
                    mutex.release();
                } else {
                    System.out.println("timeout");
                }
                client.close();
                break;
            }
            case "permits":
                permits(connect, path, Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                        Integer.parseInt(args[5]), Long.parseLong(args[6]));
                break;
            case "bench":
                bench(connect, path, Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                        Integer.parseInt(args[5]));
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + mode);
        }
        System.out.flush();
    }

    // Wall-clock microseconds, comparable with the Rust side's SystemTime on this machine.
    static long micros() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    static void permits(String connect, String path, int max, int threads, int rounds,
            long holdMs) throws Exception {
        List<Thread> workers = new ArrayList<>();
        List<Exception> failures = Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                try {
                    CuratorFramework client = connect(connect);
                    InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, max);
                    for (int r = 0; r < rounds; r++) {
                        Lease lease = semaphore.acquire();
                        long start = micros();
                        Thread.sleep(holdMs);
                        long end = micros();
                        synchronized (System.out) {
                            System.out.println("held " + start + " " + end);
                        }
                        semaphore.returnLease(lease);
                    }
                    client.close();
                } catch (Exception e) {
                    failures.add(e);
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
        System.out.println("done");
    }

    static void bench(String connect, String path, int pairs, int clients, int rounds)
            throws Exception {
        CuratorFramework single = connect(connect);
        InterProcessMutex mutex = new InterProcessMutex(single, path + "-uncontended");
        mutex.acquire();
        mutex.release();
        long start = System.nanoTime();
        for (int i = 0; i < pairs; i++) {
            mutex.acquire();
            mutex.release();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("uncontended %.1f%n", pairs / seconds);
        single.close();

        List<CuratorFramework> sessions = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            sessions.add(connect(connect));
        }
        List<Long> waits = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        long contendedStart = System.nanoTime();
        for (CuratorFramework session : sessions) {
            Thread thread = new Thread(() -> {
                InterProcessMutex shared = new InterProcessMutex(session, path + "-contended");
                try {
                    for (int r = 0; r < rounds; r++) {
                        long asked = System.nanoTime();
                        shared.acquire();
                        waits.add(System.nanoTime() - asked);
                        shared.release();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        double contendedSeconds = (System.nanoTime() - contendedStart) / 1e9;
        List<Long> sorted = new ArrayList<>(waits);
        Collections.sort(sorted);
        double p50 = sorted.get(sorted.size() / 2) / 1e6;
        double p99 = sorted.get(Math.min(sorted.size() - 1, sorted.size() * 99 / 100)) / 1e6;
        System.out.printf("contended %.1f %.2f %.2f%n", sorted.size() / contendedSeconds, p50, p99);
        for (CuratorFramework session : sessions) {
            session.close();
        }
    }
}
