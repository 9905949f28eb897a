// Apache Curator's LeaderLatch, driven by lock-lab's election interop tests.
//
//   lead   CONNECT PATH ID   start a latch with ID on PATH; print "started", then "leading"
//                            once it leads; close it when a line arrives on stdin and print
//                            "closed"
//   leader CONNECT PATH      print PATH's leader as Curator sees it: "leader <id>", or "none"

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorLatch {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        CuratorFramework client = CuratorFrameworkFactory.newClient(
                args[1], 10000, 5000, new ExponentialBackoffRetry(100, 3));
        client.start();
        if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no ZooKeeper session with " + args[1]);
        }
        String path = args[2];
        switch (mode) {
            case "lead": {
                LeaderLatch latch = new LeaderLatch(client, path, args[3]);
                latch.start();
                System.out.println("started");
                System.out.flush();
                latch.await();
                System.out.println("leading");
                System.out.flush();
                new BufferedReader(new InputStreamReader(System.in)).readLine();
                latch.close();
                System.out.println("closed");
                break;
            }
            case "leader": {
                Participant leader = new LeaderLatch(client, path).getLeader();
                System.out.println(leader.isLeader() ? "leader " + leader.getId() : "none");
                break;
            }
            default:
                throw new IllegalArgumentException("unknown mode " + mode);
        }
        System.out.flush();
        client.close();
    }
}
