// Apache Curator's InterProcessMutex under the same contention loop as the Rust runner.
//
//   java CuratorBench CONNECT PATH
//
// Warms up, then answers one request per line of standard input until it closes, so every
// request of a scenario runs in the same JVM with its JIT as warm as the Rust systems' code:
//   SECONDS C1,C2,... WARMUP
// For each client count C: C sessions (own ZooKeeper connections) take the lock PATH-R-C (R: the
// request's number) in a loop for WARMUP seconds, uncounted, then for SECONDS. Every critical section passes an in-process overlap
// detector. Prints, per count:
//   begin C
//   s <client> <wait_ns> <pair_ns> <previous client or -1> <gap_ns or -1>   (one per grant)
//   end C <overlaps> <seconds>
// and after the last count of the request:
//   done

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorBench {
    static final AtomicInteger inside = new AtomicInteger();
    static final AtomicInteger overlaps = new AtomicInteger();
    static final Object lastLock = new Object();
    static int lastClient = -1;
    static long lastLeft = -1;

    static CuratorFramework connect(String connect) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.newClient(
                connect, 10000, 5000, new ExponentialBackoffRetry(100, 3));
        client.start();
        if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no ZooKeeper session with " + connect);
        }
        return client;
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0];
        String path = args[1];
        CuratorFramework warm = connect(connect);
        InterProcessMutex warmMutex = new InterProcessMutex(warm, path + "-warmup");
        for (int i = 0; i < 300; i++) {
            warmMutex.acquire();
            warmMutex.release();
        }
        warm.close();
        BufferedReader requests = new BufferedReader(new InputStreamReader(System.in));
        String request;
        for (int number = 0; (request = requests.readLine()) != null; number++) {
            String[] fields = request.trim().split(" ");
            double seconds = Double.parseDouble(fields[0]);
            double warmup = Double.parseDouble(fields[2]);
            for (String count : fields[1].split(",")) {
                run(connect, path + "-" + number + "-" + count, Integer.parseInt(count),
                        warmup, seconds);
            }
            System.out.println("done");
            System.out.flush();
        }
    }

    static void run(String connect, String path, int clients, double warmup, double seconds)
            throws Exception {
        List<CuratorFramework> sessions = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            sessions.add(connect(connect));
        }
        overlaps.set(0);
        synchronized (lastLock) {
            lastClient = -1;
            lastLeft = -1;
        }
        List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
        long start = System.nanoTime() + (long) (warmup * 1e9);
        long deadline = start + (long) (seconds * 1e9);
        AtomicLong lastRelease = new AtomicLong(deadline);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            final int id = c;
            final InterProcessMutex mutex = new InterProcessMutex(sessions.get(c), path);
            Thread thread = new Thread(() -> {
                try {
                    while (System.nanoTime() < deadline) {
                        long asked = System.nanoTime();
                        mutex.acquire();
                        long granted = System.nanoTime();
                        if (inside.getAndIncrement() != 0) {
                            overlaps.incrementAndGet();
                        }
                        int previous;
                        long gap;
                        synchronized (lastLock) {
                            previous = lastClient;
                            gap = lastLeft < 0 ? -1 : granted - lastLeft;
                            lastClient = id;
                        }
                        Thread.yield();
                        synchronized (lastLock) {
                            lastLeft = System.nanoTime();
                        }
                        inside.decrementAndGet();
                        mutex.release();
                        long done = System.nanoTime();
                        if (granted > deadline) {
                            break; // past the window: not counted (as compare-bench's driver)
                        }
                        if (granted < start) {
                            continue; // the warm-up
                        }
                        lastRelease.accumulateAndGet(done, Math::max);
                        lines.add("s " + id + " " + (granted - asked) + " " + (done - asked) + " "
                                + previous + " " + gap);
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
        // The window and the release of the last grant in it.
        double elapsed = (lastRelease.get() - start) / 1e9;
        StringBuilder out = new StringBuilder();
        out.append("begin ").append(clients).append('\n');
        synchronized (lines) {
            for (String line : lines) {
                out.append(line).append('\n');
            }
        }
        out.append("end ").append(clients).append(' ').append(overlaps.get()).append(' ')
                .append(elapsed).append('\n');
        System.out.print(out);
        System.out.flush();
        for (CuratorFramework session : sessions) {
            session.close();
        }
    }
}
