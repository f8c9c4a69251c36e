package rig;

import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import com.netflix.client.config.CommonClientConfigKey;
import com.netflix.config.DynamicPropertyFactory;
import com.netflix.client.config.IClientConfig;
import com.netflix.loadbalancer.BaseLoadBalancer;
import com.netflix.loadbalancer.DynamicServerListLoadBalancer;
import com.netflix.loadbalancer.ILoadBalancer;
import com.netflix.loadbalancer.LoadBalancerStats;
import com.netflix.loadbalancer.Server;
import com.netflix.loadbalancer.ServerStats;
import com.netflix.niws.loadbalancer.DiscoveryEnabledServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.netflix.ribbon.SpringClientFactory;

/**
 * Read-only instrumentation of the Ribbon load balancer (caller.ribbon-probe-ms > 0): every
 * probe-ms it reads the server list and each server's ServerStats and logs a line whenever they
 * change. Lines: epoch_ms,kind,detail with kind "list" (ids of getAllServers, in order) or
 * "stats" (id, successiveConnectionFailureCount, tripped, circuit-breaker timeout epoch ms).
 * Nothing is created: it waits until the first request has created the load balancer.
 */
final class RibbonProbe {
    private static final Logger log = LoggerFactory.getLogger(RibbonProbe.class);

    private RibbonProbe() {}

    static String id(Server s) {
        return s instanceof DiscoveryEnabledServer
                ? ((DiscoveryEnabledServer) s).getInstanceInfo().getInstanceId() : s.getId();
    }

    /** Logs which classes Spring Cloud Netflix wired and the settings they read. */
    static void describe(SpringClientFactory f, String serviceId) {
        try {
            ILoadBalancer lb = f.getLoadBalancer(serviceId);
            IClientConfig cfg = f.getClientConfig(serviceId);
            StringBuilder b = new StringBuilder("RIG ribbon load balancer=" + lb.getClass().getName());
            if (lb instanceof BaseLoadBalancer) {
                BaseLoadBalancer bl = (BaseLoadBalancer) lb;
                b.append(" rule=").append(bl.getRule().getClass().getName());
                b.append(" ping=").append(bl.getPing() == null ? "null" : bl.getPing().getClass().getName());
            }
            // What ServerStats reads (LoadBalancerStats' per-client keys niws.loadbalancer.<client>.*).
            for (String k : new String[] {"connectionFailureCountThreshold", "circuitTripTimeoutFactorSeconds",
                    "circuitTripMaxTimeoutSeconds"}) {
                String key = "niws.loadbalancer." + serviceId + "." + k;
                b.append(' ').append(key).append('=')
                        .append(DynamicPropertyFactory.getInstance().getIntProperty(key, -1).get());
            }
            if (lb instanceof DynamicServerListLoadBalancer) {
                DynamicServerListLoadBalancer<?> d = (DynamicServerListLoadBalancer<?>) lb;
                b.append(" serverList=").append(d.getServerListImpl().getClass().getName());
                b.append(" filter=").append(d.getFilter() == null ? "null" : d.getFilter().getClass().getName());
                b.append(" updater=").append(f.getInstance(serviceId, com.netflix.loadbalancer.ServerListUpdater.class).getClass().getName());
            }
            b.append(" ServerListRefreshInterval=").append(cfg.get(CommonClientConfigKey.ServerListRefreshInterval));
            b.append(" ConnectTimeout=").append(cfg.get(CommonClientConfigKey.ConnectTimeout));
            b.append(" ReadTimeout=").append(cfg.get(CommonClientConfigKey.ReadTimeout));
            b.append(" MaxAutoRetries=").append(cfg.get(CommonClientConfigKey.MaxAutoRetries));
            b.append(" MaxAutoRetriesNextServer=").append(cfg.get(CommonClientConfigKey.MaxAutoRetriesNextServer));
            log.info(b.toString());
        } catch (Throwable e) {
            log.warn("RIG ribbon describe failed", e);
        }
    }

    static void start(SpringClientFactory f, String serviceId, long periodMs, String file) throws IOException {
        PrintWriter w = new PrintWriter(new FileWriter(file, true), true);
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rig-ribbon-probe");
            t.setDaemon(true);
            return t;
        });
        final String[] lastList = {null};
        final java.util.Map<String, String> lastStats = new java.util.HashMap<>();
        s.scheduleWithFixedDelay(() -> {
            try {
                ILoadBalancer lb = f.getInstance(serviceId, ILoadBalancer.class);
                if (!(lb instanceof BaseLoadBalancer)) {
                    return;
                }
                BaseLoadBalancer bl = (BaseLoadBalancer) lb;
                long now = System.currentTimeMillis();
                List<Server> all = bl.getAllServers();
                String ids = all.stream().map(RibbonProbe::id).collect(Collectors.joining(" "));
                if (!ids.equals(lastList[0])) {
                    lastList[0] = ids;
                    w.println(now + ",list," + ids);
                }
                LoadBalancerStats st = bl.getLoadBalancerStats();
                for (Server sv : all) {
                    ServerStats ss = st.getSingleServerStat(sv);
                    String v = ss.getSuccessiveConnectionFailureCount() + " "
                            + ss.isCircuitBreakerTripped(now);
                    String k = id(sv);
                    if (!v.equals(lastStats.get(k))) {
                        lastStats.put(k, v);
                        w.println(now + ",stats," + k + " " + v);
                    }
                }
            } catch (Throwable e) {
                // the load balancer does not exist yet, or a list swap under way: next tick
            }
        }, periodMs, periodMs, TimeUnit.MILLISECONDS);
    }
}
