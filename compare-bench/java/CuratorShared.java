// Apache Curator's InterProcessSemaphoreV2 and InterProcessReadWriteLock under the same shared-
// hold loop as the Rust runner.
//
//   java CuratorShared CONNECT PATH SECONDS MODE CLIENTS
//
// MODE is `semaphore` (5 permits) or `rw` (90 % reads, 10 % writes). CLIENTS sessions (own
// ZooKeeper connections) take holds of PATH in a loop for SECONDS. Every hold passes an
// in-process occupancy check: a violation is a sixth permit holder, or a writer with company.
// Prints:
//   begin CLIENTS
//   s <client> <wait_ns> <pair_ns> -1 -1   (one per grant)
//   end CLIENTS <violations> <seconds>

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorShared {
    static final int PERMITS = 5;
    static final AtomicInteger shared = new AtomicInteger();
    static final AtomicInteger writers = new AtomicInteger();
    static final AtomicInteger violations = new AtomicInteger();

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
        double seconds = Double.parseDouble(args[2]);
        String mode = args[3];
        int clients = Integer.parseInt(args[4]);
        List<CuratorFramework> sessions = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            sessions.add(connect(connect));
        }
        // Warm the JVM on the same recipe, apart from the measured path.
        InterProcessSemaphoreV2 warm = new InterProcessSemaphoreV2(sessions.get(0), path + "-warmup", PERMITS);
        for (int i = 0; i < 200; i++) {
            warm.returnLease(warm.acquire());
        }
        List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
        long start = System.nanoTime();
        long deadline = start + (long) (seconds * 1e9);
        AtomicLong lastRelease = new AtomicLong(deadline);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            final int id = c;
            final CuratorFramework session = sessions.get(c);
            Thread thread = new Thread(() -> {
                try {
                    InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(session, path, PERMITS);
                    InterProcessReadWriteLock rw = new InterProcessReadWriteLock(session, path);
                    while (System.nanoTime() < deadline) {
                        long asked = System.nanoTime();
                        long granted;
                        if (mode.equals("semaphore")) {
                            Lease lease = semaphore.acquire();
                            granted = System.nanoTime();
                            if (shared.incrementAndGet() > PERMITS) {
                                violations.incrementAndGet();
                            }
                            Thread.yield();
                            shared.decrementAndGet();
                            semaphore.returnLease(lease);
                        } else {
                            boolean write = ThreadLocalRandom.current().nextInt(100) < 10;
                            InterProcessMutex side = write ? rw.writeLock() : rw.readLock();
                            side.acquire();
                            granted = System.nanoTime();
                            AtomicInteger mine = write ? writers : shared;
                            mine.incrementAndGet();
                            if (writers.get() > 1 || (writers.get() == 1 && shared.get() > 0)) {
                                violations.incrementAndGet();
                            }
                            Thread.yield();
                            mine.decrementAndGet();
                            side.release();
                        }
                        long done = System.nanoTime();
                        if (granted > deadline) {
                            break; // past the window: not counted (as compare-bench's driver)
                        }
                        lastRelease.accumulateAndGet(done, Math::max);
                        lines.add("s " + id + " " + (granted - asked) + " " + (done - asked) + " -1 -1");
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
        out.append("end ").append(clients).append(' ').append(violations.get()).append(' ')
                .append(elapsed).append('\n');
        System.out.print(out);
        System.out.flush();
        for (CuratorFramework session : sessions) {
            session.close();
        }
    }
}
