// Apache Curator's LeaderLatch for compare-bench's election scenario: a leader whose process
// is killed, and a follower that reports when it leads.
//
//   lead   HOSTS PATH SESSION_MS   lead the latch at PATH; print "leading"; then wait until killed
//   follow HOSTS PATH SESSION_MS   join the latch; print "started"; once it leads print
//                                  "leading <wall-clock µs>" and exit

import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorElection {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int session = Integer.parseInt(args[3]);
        CuratorFramework client = CuratorFrameworkFactory.newClient(
                args[1], session, 5000, new ExponentialBackoffRetry(100, 3));
        client.start();
        if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no ZooKeeper session with " + args[1]);
        }
        LeaderLatch latch = new LeaderLatch(client, args[2], mode);
        latch.start();
        if (mode.equals("lead")) {
            latch.await();
            System.out.println("leading");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        } else {
            System.out.println("started");
            System.out.flush();
            latch.await();
            java.time.Instant now = java.time.Instant.now();
            System.out.println("leading " + (now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000));
            System.out.flush();
            latch.close();
            client.close();
        }
    }
}
